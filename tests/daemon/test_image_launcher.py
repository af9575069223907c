"""The sidecar image's `cozy-render` (docs/argocd/Dockerfile writes it over pip's console script, which
imports `re` to strip a Windows suffix): the same entry point under -P. Its `cmp generate` is served by a
daemon whichever way that daemon was started (the interpreter key leaves -P out, and the import path's
leading script entry with it), with the bytes of an in-process run."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.daemon.conftest import RUN_SECONDS, Outcome, base_env, generate
from tests.daemon.test_server import app_env

DOCKERFILE = REPO / "docs" / "argocd" / "Dockerfile"
TARGET = "/usr/local/bin/cozy-render"
PYTHON = '"$(command -v python3)"'


def write_launcher(where: Path) -> Path:
    """The Dockerfile's own printf line, run with this interpreter and ``where`` for the image's paths."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    (line,) = [line for line in text.splitlines() if line.startswith("RUN printf") and f"> {TARGET}" in line]
    command = line.removeprefix("RUN ").split(" && ")[0].strip()
    assert PYTHON in command and command.endswith(f"> {TARGET}"), command
    command = command.replace(PYTHON, shlex.quote(sys.executable)).replace(TARGET, shlex.quote(str(where)))
    subprocess.run(["/bin/sh", "-c", command], check=True)
    where.chmod(0o755)
    return where


def through(launcher: Path, cwd: Path, env: dict[str, str], daemon: Path) -> Outcome:
    proc = subprocess.run([str(launcher), "cmp", "generate"], cwd=cwd, capture_output=True, timeout=RUN_SECONDS,
                          env={**env, "COZY_RENDER_DAEMON_SOCKET": str(daemon)}, stdin=subprocess.DEVNULL)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def test_the_launcher_is_the_entry_point(tmp_path: Path, samples: Path) -> None:
    launcher = write_launcher(tmp_path / "cozy-render")
    assert launcher.read_text().splitlines()[0] == f"#!{sys.executable} -P"
    assert "import re" not in launcher.read_text()
    app, env = app_env(samples)
    proc = subprocess.run([str(launcher), "cmp", "generate"], cwd=app, env=env, capture_output=True,
                          timeout=RUN_SECONDS, stdin=subprocess.DEVNULL)
    assert Outcome(proc.returncode, proc.stdout, proc.stderr) == generate(app, env)


@pytest.mark.parametrize("server_options", [("-P",), ()], ids=["server-P", "server-plain"])
def test_the_launchers_generate_is_served_with_in_process_bytes(start_daemon, tmp_path: Path, samples: Path,
                                                                 server_options: tuple[str, ...]) -> None:
    launcher = write_launcher(tmp_path / "cozy-render")
    server_env = {k: v for k, v in base_env().items() if k != "PYTHONSAFEPATH"}  # plain: the cwd leads sys.path
    daemon = start_daemon(python=server_options, env=server_env)
    app, env = app_env(samples)
    assert through(launcher, app, env, daemon.socket) == generate(app, env)
    assert daemon.served() == 1, daemon.log_text()
