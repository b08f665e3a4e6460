"""A Spark standalone cluster on this machine, for `dbt build --target spark_cluster`.

Starts a master and N workers as separate processes on the loopback interface with the launcher
that ships with pyspark (``$SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master`` /
``...worker.Worker``; nothing is downloaded), each on free ports, each in its own process session,
with an environment that holds no virtualenv, no PYTHONPATH and not the caller's working directory:
what an executor needs has to travel with the job (``spark.archives``, see ``vader_archive``).
Stopping sends SIGTERM, then SIGKILL, to every process of those sessions (the daemons, the executor
JVMs they launch and the script-transformation processes of the executors) and checks none is left.
The daemons also get SIGKILL from the kernel if the process that started them dies (Linux
``PR_SET_PDEATHSIG``), so a killed test run does not leave a cluster behind either.

Used by ``tests/python/test_spark_cluster.py`` (``make test-spark-cluster``). By hand::

    python -m preftools.devtools.spark_cluster vader-archive /tmp/vader.zip
    python -m preftools.devtools.spark_cluster run -- dbt build --target spark_cluster ...

``run`` starts the cluster, runs the command with ``SPARK_MASTER`` set to it, prints the peak RSS of
the driver (the command's process tree) and of each worker (daemon + executor + scripts), and stops
the cluster whatever the command did.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from preftools.devtools.processes import proc_table, tree_rss

HOST = "127.0.0.1"


# ----------------------------------------------------------------------------- what travels

def vader_archive(out: Path) -> Path:
    """A zip of the installed vaderSentiment package (its module and both lexicon files) at
    ``out``, laid out as ``vaderSentiment/...``. Shipped with ``spark.archives=<out>#vader``,
    Spark unpacks it into ``./vader/`` in every executor's working directory; with
    ``PYTHONPATH=vader`` in the executors' environment the VADER step's interpreter imports it
    from there (a zip on PYTHONPATH would not do: vaderSentiment opens its lexicon as a file
    next to its module). Fixed timestamps: the same package gives the same bytes."""
    spec = importlib.util.find_spec("vaderSentiment")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("vaderSentiment is not installed in this Python: pip install -r requirements.txt")
    package = Path(list(spec.submodule_search_locations)[0])
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(package.rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            info = zipfile.ZipInfo(f"vaderSentiment/{path.relative_to(package).as_posix()}", (1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())
    tmp.replace(out)
    return out


# ----------------------------------------------------------------------------- processes

def spark_home() -> Path:
    """$SPARK_HOME, else the pip-installed pyspark (it ships bin/spark-class and jars/)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise RuntimeError("pyspark is not installed: make install-spark")
    return Path(spec.origin).parent


def free_ports(count: int, host: str = HOST) -> list[int]:
    """``count`` distinct ports nobody listens on right now (the kernel picks them)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent() -> None:
    """preexec_fn: own session (process group), and SIGKILL when the starting thread dies."""
    os.setsid()
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def session_processes(session_ids) -> list[int]:
    """Live processes (not zombies' leftovers of ours) in any of ``session_ids``."""
    wanted = set(session_ids)
    alive = []
    for pid, (_, sid, _) in proc_table().items():
        if sid in wanted:
            try:
                state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if state != b"Z":
                alive.append(pid)
    return sorted(alive)


class PeakRss:
    """Samples the resident set size of process trees (a root and all its descendants, summed)
    every ``interval`` seconds in a thread; ``peaks[name]`` is the highest sum seen."""

    def __init__(self, interval: float = 0.25):
        self.interval = interval
        self.roots: dict[str, int] = {}
        self.peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def watch(self, name: str, pid: int) -> None:
        self.roots[name] = pid
        self.peaks.setdefault(name, 0)

    def sample(self) -> None:
        table = proc_table()
        for name, root in list(self.roots.items()):
            if root in table:
                self.peaks[name] = max(self.peaks[name], tree_rss(root, table))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Daemon:
    name: str
    process: subprocess.Popen
    log: Path
    ports: dict[str, int]
    work_dir: Path | None = None

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


@dataclass
class StandaloneCluster:
    """A standalone master and ``workers`` workers on 127.0.0.1, each worker offering
    ``worker_cores`` cores and ``worker_memory`` to executors. Use as a context manager."""

    root: Path
    workers: int = 2
    worker_cores: int = 1
    worker_memory: str = "6g"
    daemon_memory: str = "512m"
    start_timeout: float = 180.0
    daemons: list[Daemon] = field(default_factory=list)
    leftover: list[int] = field(default_factory=list)

    @property
    def master(self) -> Daemon:
        return self.daemons[0]

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master.ports['port']}"

    @property
    def worker_daemons(self) -> list[Daemon]:
        return self.daemons[1:]

    def ports(self) -> dict[str, dict[str, int]]:
        return {d.name: d.ports for d in self.daemons}

    def env(self) -> dict[str, str]:
        """The daemons' environment: Java, Spark's folders under ``root`` and nothing of the
        caller's Python (no VIRTUAL_ENV, PYTHONPATH or venv on PATH), so an executor finds
        only what the job ships."""
        java_dirs = [str(Path(os.environ["JAVA_HOME"]) / "bin")] if os.environ.get("JAVA_HOME") else []
        env = {
            "PATH": ":".join(java_dirs + ["/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
            "SPARK_HOME": str(spark_home()),
            "SPARK_CONF_DIR": str(self.root / "conf"),
            "SPARK_LOG_DIR": str(self.root / "logs"),
            "SPARK_PID_DIR": str(self.root / "pids"),
            "SPARK_LOCAL_DIRS": str(self.root / "local"),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_DAEMON_MEMORY": self.daemon_memory,
            "TMPDIR": str(self.root / "tmp"),
        }
        if os.environ.get("JAVA_HOME"):
            env["JAVA_HOME"] = os.environ["JAVA_HOME"]
        return env

    def _start(self, name: str, args: list[str], ports: dict[str, int], work_dir: Path | None = None) -> Daemon:
        log = self.root / "logs" / f"{name}.log"
        with open(log, "ab") as out:
            process = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                cwd=self.root, env=self.env(), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
        daemon = Daemon(name, process, log, ports, work_dir)
        self.daemons.append(daemon)
        return daemon

    def _master_state(self) -> dict:
        url = f"http://{HOST}:{self.master.ports['webui']}/json/"
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)

    def start(self) -> "StandaloneCluster":
        for sub in ("conf", "logs", "pids", "local", "tmp"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        ports = free_ports(2 + 2 * self.workers)
        master_port, master_ui = ports[0], ports[1]
        self._start("master", ["org.apache.spark.deploy.master.Master", "--host", HOST,
                               "--port", str(master_port), "--webui-port", str(master_ui)],
                    {"port": master_port, "webui": master_ui})
        for i in range(self.workers):
            port, ui = ports[2 + 2 * i], ports[3 + 2 * i]
            work_dir = self.root / f"worker-{i + 1}"
            work_dir.mkdir(exist_ok=True)
            self._start(f"worker-{i + 1}", [
                "org.apache.spark.deploy.worker.Worker", "--host", HOST, "--port", str(port),
                "--webui-port", str(ui), "--cores", str(self.worker_cores), "--memory", self.worker_memory,
                "--work-dir", str(work_dir), self.master_url], {"port": port, "webui": ui}, work_dir)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        state: dict = {}
        while time.monotonic() < deadline:
            for d in self.daemons:
                if d.process.poll() is not None:
                    raise RuntimeError(f"Spark {d.name} exited with {d.process.returncode} while starting "
                                       f"(ports {d.ports}):\n{d.log_tail()}")
            try:
                state = self._master_state()
                if state.get("status") == "ALIVE" and state.get("aliveworkers", 0) >= self.workers:
                    return
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"the Spark cluster was not ready after {self.start_timeout:.0f} s "
                           f"(master state: {state}); ports {self.ports()}\n"
                           + "\n".join(f"--- {d.name}\n{d.log_tail(1500)}" for d in self.daemons))

    def stop(self, grace: float = 20.0) -> list[int]:
        """SIGTERM to every process of the daemons' sessions, SIGKILL to what is left after
        ``grace`` seconds; returns the pids still alive after that (should be none)."""
        sessions = [d.process.pid for d in self.daemons]
        for d in self.daemons:
            if d.process.poll() is None:
                try:
                    os.killpg(d.process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and session_processes(sessions):
            time.sleep(0.5)
        for pid in session_processes(sessions):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for d in self.daemons:
            try:
                d.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        time.sleep(0.5)
        self.leftover = session_processes(sessions)
        return self.leftover

    def __enter__(self) -> "StandaloneCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def stop_session(pid: int, grace: float = 10.0) -> list[int]:
    """Stop what is left of a process session started with ``preexec_fn=_die_with_parent``
    (e.g. a Spark driver JVM a dbt run left); returns the pids still alive."""
    if not session_processes([pid]):
        return []
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and session_processes([pid]):
        time.sleep(0.5)
    for p in session_processes([pid]):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.5)
    return session_processes([pid])


def start_in_session(command: list[str], **popen) -> subprocess.Popen:
    """Popen in a new session that dies with the caller (see ``stop_session``)."""
    return subprocess.Popen(command, preexec_fn=_die_with_parent, **popen)


def gib(n: int) -> str:
    return f"{n / 1024**3:.2f} GiB"


# ----------------------------------------------------------------------------- CLI

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preftools.devtools.spark_cluster", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    archive = sub.add_parser("vader-archive", help="zip the installed vaderSentiment for spark.archives")
    archive.add_argument("out", type=Path)
    run = sub.add_parser("run", help="start a local standalone cluster, run a command against it, stop it")
    run.add_argument("--root", type=Path, help="the cluster's folders (default: a new temp dir)")
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--worker-cores", type=int, default=1)
    run.add_argument("--worker-memory", default="6g")
    run.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "vader-archive":
        print(vader_archive(args.out))
        return 0
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("run needs a command after --")
    import tempfile
    root = args.root or Path(tempfile.mkdtemp(prefix="spark-cluster-"))
    cluster = StandaloneCluster(root, args.workers, args.worker_cores, args.worker_memory)
    with cluster, PeakRss() as rss:
        print(f"spark cluster {cluster.master_url}, ports {cluster.ports()}, folders {root}", file=sys.stderr)
        for d in cluster.worker_daemons:
            rss.watch(d.name, d.process.pid)
        started = time.monotonic()
        proc = start_in_session(cmd, env=dict(os.environ, SPARK_MASTER=cluster.master_url))
        rss.watch("driver", proc.pid)
        try:
            code = proc.wait()
        finally:
            stop_session(proc.pid)
        wall = time.monotonic() - started
    print(f"exit {code}, {wall:.0f} s; peak RSS " + ", ".join(f"{k} {gib(v)}" for k, v in rss.peaks.items())
          + (f"; LEFT RUNNING: {cluster.leftover}" if cluster.leftover else "; cluster stopped"), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
