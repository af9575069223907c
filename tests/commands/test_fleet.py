"""Fleet runs a person can watch (renderer.commands.fleet): progress and a summary on a terminal,
exactly today's output through a pipe."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from renderer.commands import fleet
from renderer.errors import WARNING, Finding, Location
from tests.conftest import OVERLAYS, REPO

pty_only = pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminals on Windows")


def _run_with_stderr(args: list[str], terminal: bool, cwd: Path) -> tuple[int, bytes, bytes]:
    """Run cozy-render with stdout on a pipe and stderr on a pty (terminal) or a pipe."""
    import pty
    import select
    command = [sys.executable, "-m", "renderer", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100", "PYTHONDONTWRITEBYTECODE": "1"}
    if not terminal:
        proc = subprocess.run(command, cwd=cwd, capture_output=True, env=env, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    leader, follower = pty.openpty()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    assert child.stdout is not None
    out, err = b"", b""
    streams = {child.stdout.fileno(): "out", leader: "err"}
    while streams:
        ready, _, _ = select.select(list(streams), [], [], 30)
        assert ready, "cozy-render hung"
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty reports EIO once the child closed it
                chunk = b""
            if not chunk:
                del streams[fd]
            elif streams[fd] == "out":
                out += chunk
            else:
                err += chunk
    os.close(leader)
    child.stdout.close()
    return child.wait(), out, err


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, tree)
    (tree / ".git").mkdir()
    return tree


@pty_only
def test_a_pipe_gets_byte_identical_render_all_output_with_a_terminal_on_stderr(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    piped = _run_with_stderr(["render", ".", "--all"], terminal=False, cwd=tree)
    watched = _run_with_stderr(["render", ".", "--all"], terminal=True, cwd=tree)
    assert piped[0] == watched[0] == 0
    assert piped[1] == watched[1]
    assert piped[1].count(b"kind: Package") > 7
    assert b"clusters," not in piped[2]  # no summary without a terminal
    summary = watched[2].decode().replace("\r", "\n").splitlines()
    assert any(line.startswith("7 clusters, ") and " objects, 0 errors, " in line for line in summary)


@pty_only
def test_check_all_on_a_terminal_ends_with_the_summary(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    code, out, err = _run_with_stderr(["check", ".", "--all"], terminal=True, cwd=tree)
    assert (code, out) == (0, b"")
    assert "7 clusters, " in err.decode()


def _tagged(n: int) -> list[tuple[str, Finding]]:
    return [(f"c{i}", Finding("PLT-11", "same warning", Location("base/cluster.yaml", 3, 1), WARNING))
            for i in range(n)]


def test_identical_warnings_are_printed_once_with_a_count_and_names() -> None:
    text = fleet.grouped_text(_tagged(5))
    assert text == ("base/cluster.yaml:3:1: warning[PLT-11]: same warning  "
                    "[5 clusters: c0, c1, c2, ...; -v prints each]\n")


def test_verbose_prints_every_line() -> None:
    assert fleet.grouped_text(_tagged(5), verbose=True).count("\n") == 5


def test_without_a_terminal_nothing_is_watched() -> None:
    class Pipe:
        def isatty(self) -> bool:
            return False

    assert fleet.watching(Pipe()) is False  # type: ignore[arg-type]


def test_a_warning_each_cluster_has_in_its_own_file_is_one_line_at_the_first() -> None:
    tagged = [(f"c{i}", Finding("PLT-11", "same", Location(f"clusters/c{i}/cluster.yaml", 9, 3), WARNING))
              for i in range(2)]
    assert fleet.grouped_text(tagged) == ("clusters/c0/cluster.yaml:9:3: warning[PLT-11]: same  "
                                          "[2 clusters: c0, c1; -v prints each]\n")
