"""A real ``cozy-render daemon serve`` in a subprocess, on a socket under tmp_path, always stopped."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import REPO

START_SECONDS = 120.0  # the warm-up renders a sample on a shared 2-core machine
RUN_SECONDS = 120.0


# A copy of the package the servers and their clients import (base_env), taken once per session: a
# server refuses every request once a file of its package changes (an upgrade), and a checkout's files
# change while people work in it.
PACKAGE_COPY: list[Path] = []


@pytest.fixture(scope="session", autouse=True)
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    for folder in ("renderer", "variants"):  # variants/ beside the package, as in a checkout
        shutil.copytree(REPO / folder, site / folder, ignore=shutil.ignore_patterns("__pycache__"))
    PACKAGE_COPY[:] = [site]
    return site


def base_env(pythonpath: Path | None = None) -> dict[str, str]:
    """The environment of both the server and its clients (the interpreter key includes sys.path)."""
    # PYTHONSAFEPATH (set by tests/conftest.py against the wheel) stays as it is: the servers and clients
    # import the package copy named by PYTHONPATH either way (test_server.py's upgrade case runs both).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER", "KUBE_VERSION"))}
    env["PYTHONPATH"] = str(pythonpath or (PACKAGE_COPY[0] if PACKAGE_COPY else REPO))
    return env


class Outcome(NamedTuple):
    returncode: int
    stdout: bytes
    stderr: bytes


def generate(cwd: Path, env: dict[str, str], daemon: Path | None = None) -> Outcome:
    """``cozy-render cmp generate`` the way argocd-cmp-server runs it; through ``daemon`` when given."""
    env = dict(env)
    if daemon is not None:
        env["COZY_RENDER_DAEMON_SOCKET"] = str(daemon)
    proc = subprocess.run([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=cwd, env=env,
                          capture_output=True, timeout=RUN_SECONDS, stdin=subprocess.DEVNULL)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


class Daemon:
    def __init__(self, socket: Path, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.socket, self.proc, self.log = socket, proc, log

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def served(self) -> int:
        """Requests a worker ran (the server's --verbose lines)."""
        return sum(" worker " in line for line in self.log_text().splitlines())

    def workers(self) -> list[int]:
        return children_of(self.proc.pid)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        return self.proc.returncode


def children_of(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rpartition(b")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                found.append(int(entry))
    return found


def processes_naming(text: str) -> list[int]:
    """Live processes whose command line holds ``text`` (zombies have none)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if text.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def nothing_names(text: str) -> bool:
    return not processes_naming(text)


def wait_until(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def start_daemon(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(*options: str, env: dict[str, str] | None = None, socket: Path | None = None,
              wait: bool = True, python: tuple[str, ...] = ()) -> Daemon:
        path = socket or tmp_path / f"run{len(started)}" / "daemon.sock"
        log = tmp_path / f"daemon{len(started)}.log"
        server_env = dict(env or base_env())
        server_env["TMPDIR"] = str(tmp_path / "server-tmp")
        (tmp_path / "server-tmp").mkdir(exist_ok=True)
        with open(log, "wb") as handle:
            proc = subprocess.Popen([sys.executable, *python, "-m", "renderer", "daemon", "serve", "--socket", str(path),
                                     "--verbose", *options], env=server_env, stdin=subprocess.DEVNULL,
                                    stdout=handle, stderr=handle, cwd=tmp_path)
        daemon = Daemon(path, proc, log)
        started.append(daemon)
        if wait:
            assert wait_until(lambda: "serving" in daemon.log_text() or proc.poll() is not None, START_SECONDS)
            assert proc.poll() is None, daemon.log_text()
        return daemon

    try:
        yield start
    finally:
        for daemon in started:
            daemon.stop()
        for daemon in started:  # nothing a server forked outlives it: its workers carry its command line
            assert wait_until(functools.partial(nothing_names, str(daemon.socket)), 10), str(daemon.socket)
