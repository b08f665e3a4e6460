"""What the command-line tools share: exit codes, one-line messages (also for a failed write,
naming the disk when it is full), the debug switch, and the entry point that turns any
unexpected exception into one line (a traceback only with PREFTOOLS_DEBUG=1).

The warehouse helpers (its default path, opening it read-only, DuckDB's lock errors) are in
:mod:`preftools.warehouse`."""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

# set (to anything) for a traceback instead of one line on an unexpected error
DEBUG_ENV = "PREFTOOLS_DEBUG"

# how to give huggingface_hub a token (fetch of gated datasets, publish)
HF_LOGIN_HINT = "run `hf auth login` (older huggingface_hub: `huggingface-cli login`) or set HF_TOKEN"

# the project (dbt_project.yml, profiles.yml): `make install` installs preftools editable, so this is
# the repo whatever the current directory
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def project_path(value: str | os.PathLike, root: str | os.PathLike = PROJECT_ROOT) -> Path:
    """A path from the environment (DUCKDB_PATH, EXPORT_DIR, RAW_DATA_DIR) as dbt reads it,
    absolute: a relative one is relative to the project directory ``root`` (itself relative to the
    current directory when given so, as dbt's --project-dir), not to the current directory."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(os.path.abspath(root)) / path


def one_line(text: object, limit: int = 400) -> str:
    """``text`` on one line (white space folded), cut to ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def error(prog: str, message: str) -> None:
    print(f"{prog}: error: {one_line(message, 1000)}", file=sys.stderr, flush=True)


def debugging() -> bool:
    """Whether PREFTOOLS_DEBUG asks for tracebacks."""
    return bool(os.environ.get(DEBUG_ENV))


def unexpected_error(prog: str, exc: Exception) -> int:
    """Report an exception nobody expected as one line and return EXIT_ERROR; with
    PREFTOOLS_DEBUG set, raise it instead (call this from the ``except`` clause)."""
    if debugging():
        raise exc
    error(prog, f"unexpected {type(exc).__name__}: {one_line(exc)} (set {DEBUG_ENV}=1 for a traceback)")
    return EXIT_ERROR


def run(prog: str, main: Callable[[], int]) -> int:
    """``main()``'s exit code; Ctrl-C and unexpected exceptions become one line on stderr."""
    try:
        return main()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - never a traceback for users
        return unexpected_error(prog, exc)


# --------------------------------------------------------------------------------------------
# disks and failed writes


def mount_point(path: Path) -> Path:
    """The mount point of the file system that holds ``path`` (or would, once created)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: Path) -> int | None:
    """Bytes free for us on the file system of ``path``; None when it cannot be told."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def disk_note(path: Path | str) -> str:
    """" (the disk mounted at /x, N MB free)" for the file system holding ``path``, or ""."""
    try:
        mount = mount_point(Path(path))
    except OSError:
        return ""
    free = free_bytes(mount)
    return "" if free is None else f" (the disk mounted at {mount}, {free / 1e6:,.1f} MB free)"


def os_error_message(exc: OSError, where: Path | str, *, option: str, env: str | None = None,
                     action: str = "write", no_space_note: str = "") -> str:
    """One line for an OSError while writing below a folder the user chose (also pyarrow's
    OSErrors, which often carry the errno only in their text): what could not be done where,
    and what to do. ``option`` (and ``env``, its variable) is how the user chooses another
    folder; ``no_space_note`` (ending in "; ") says what a full disk left behind."""
    where = exc.filename or where
    text = str(exc)
    code = exc.errno
    if code is None:
        match = re.search(r"\[Errno (\d+)\]", text)
        code = int(match.group(1)) if match else None
    choose_another = f"choose another {option}" + (f" (or {env})" if env else "")
    if code == errno.ENOSPC or "No space left" in text:
        return (
            f"no space left on device while writing {where}{disk_note(where)}; {no_space_note}"
            f"free some space or choose another {option}"
        )
    if code == errno.EDQUOT:
        return f"disk quota exceeded while writing {where}; free some space or choose another {option}"
    if code in (errno.EACCES, errno.EPERM, errno.EROFS) or isinstance(exc, PermissionError):
        reason = exc.strerror or "permission denied"
        return f"cannot {action} {where}: {reason}; {choose_another} or fix its permissions"
    if code in (errno.ENOTDIR, errno.EEXIST) or isinstance(exc, (NotADirectoryError, FileExistsError)):
        return f"cannot {action} {where}: a path component is a file, not a directory; {choose_another}"
    return f"cannot {action} {where}: {one_line(exc.strerror or exc)}"
