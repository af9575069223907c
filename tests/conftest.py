from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
OVERLAYS = REPO / "overlays"

# The smallest valid cluster overlay (cluster c1); tests add the keys they exercise.
BASE_OVERLAY = {
    "apiVersion": "render.cozystack.io/v1alpha1",
    "kind": "ClusterOverlay",
    "metadata": {"name": "c1"},
    "host": {"os": "apt"},
    "platform": {"variant": "isp-full-generic"},
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="Rewrite tests/cases/*/expected.* from the output.")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Tests never reach the network; the ones that need the local API fake mark themselves."""
    if request.node.get_closest_marker("loopback"):
        return
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        if self.family == socket.AF_UNIX:
            return real_connect(self, address)
        raise RuntimeError(f"network access in a test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "loopback: test talks to a server on 127.0.0.1 that it started itself")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def cli(runner: CliRunner):
    """Run the CLI in-process; returns (exit_code, stdout, stderr)."""
    from renderer.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(main, list(args), catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return run


@pytest.fixture
def repo(tmp_path: Path):
    """Build an overlay repository from {relative path: text}; returns its root (with a .git marker)."""

    def build(files: dict[str, str], copy_base: bool = False) -> Path:
        root = tmp_path / "repo"
        root.mkdir(exist_ok=True)
        (root / ".git").mkdir(exist_ok=True)
        if copy_base:
            shutil.copytree(OVERLAYS, root, dirs_exist_ok=True)
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root

    return build
