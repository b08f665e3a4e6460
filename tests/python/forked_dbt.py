"""The dbt CLI for the tests, in a process forked from one that has already imported dbt.

Each run is still its own process, with the test's arguments, environment, working directory and
output, running the same entry point as the ``dbt`` command (``dbt.cli.main.cli``) and exiting
as that command does (Python's exit handlers run, so dbt-duckdb closes the warehouse). What it
skips is dbt's imports, about 1.4 s of CPU in each of the suite's dbt runs: multiprocessing's
forkserver imports dbt once per pytest worker and forks each run from there. The server also
parses the project once before it forks anything (forked_dbt_warm.py), so what dbt builds on
first use is built once too (about 0.5 s of each run).

Tests about the command itself (its path, a run from another directory, ``make``) start the
real executable instead.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.forkserver
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DBT = str(Path(sys.executable).parent / "dbt")
PRELOAD = ["dbt.cli.main", "dbt.adapters.duckdb", "dbt.adapters.duckdb.impl", "duckdb"]

_context = None


def _dbt_main(args: list[str], env: dict, cwd: str, out: str, err: str) -> None:
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, out), (2, err)):
        file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(file, fd)
        os.close(file)
    sys.argv = [DBT, *args]
    from dbt.cli.main import cli

    try:
        cli.main(args=args, prog_name="dbt")
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    atexit._run_exitfuncs()  # as the dbt command's exit does: dbt-duckdb closes (checkpoints) the file
    sys.exit(code)


def run(args: list[str], env: dict, cwd: Path | str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """``subprocess.run([DBT, *args], cwd=cwd, env=env, capture_output=True, text=True,
    timeout=timeout)``, forked instead of started."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload([*PRELOAD, "forked_dbt_warm"])
        # the forkserver imports its preload modules by name, with the path its environment
        # gives: this folder is put on it while the server starts
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), saved]))
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved
        # Wait for the server when the worker exits (multiprocessing only closes its pipe): the
        # CPU time of the server and of every run it forked then counts in the worker's, and so
        # in what `time make test` or the bench reports (without it, about half the suite's CPU
        # went uncounted). multiprocessing has no public call for this; its own tests use _stop.
        atexit.register(multiprocessing.forkserver._forkserver._stop)
    with tempfile.TemporaryDirectory(prefix="dbt-run-") as tmp:
        out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
        process = _context.Process(target=_dbt_main, args=(list(args), dict(env), str(cwd), str(out), str(err)))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired([DBT, *args], timeout, out.read_text(), err.read_text())
        return subprocess.CompletedProcess([DBT, *args], process.exitcode, out.read_text(), err.read_text())
