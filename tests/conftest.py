from __future__ import annotations

import copy
import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

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


def overlay_doc(*parts: dict[str, Any], **sections: Any) -> dict[str, Any]:
    """BASE_OVERLAY with ``parts``/``sections`` laid over it; a mapping merges one level deep."""
    data = copy.deepcopy(BASE_OVERLAY)
    for part in (*parts, sections):
        for key, value in copy.deepcopy(part).items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
    return data


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


# Set by .ci/run, which runs the suite from the unpacked sdist against the built wheel installed in a
# fresh virtual environment: then `renderer` must be that install, never a source tree (issue 31: a
# folder missing from the wheel must fail a test, not be served from the checkout).
INSTALLED = os.environ.get("COZY_RENDER_TEST_INSTALLED") == "1"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "loopback: test talks to a server on 127.0.0.1 that it started itself")
    if INSTALLED:
        import renderer

        package = Path(renderer.__file__).resolve().parent
        if package.is_relative_to(REPO) or not any(part in ("site-packages", "dist-packages") for part in package.parts):
            raise pytest.UsageError(f"COZY_RENDER_TEST_INSTALLED=1 but renderer is imported from {package}, not from "
                                    "an installed wheel (run pytest with --import-mode=importlib, from the venv's "
                                    "pytest, outside the source tree's sys.path)")
        # The Python children the tests start (`python -c ...`, `python -m renderer` with the source tree as
        # their working folder) must import the install too, not the tree's renderer/ from sys.path[0].
        os.environ["PYTHONSAFEPATH"] = "1"


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


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    """A copy of the bundled sample overlay tree (with a .git marker); returns its root."""
    root = tmp_path / "samples"
    shutil.copytree(OVERLAYS, root)
    (root / ".git").mkdir()
    return root


@pytest.fixture
def cluster(repo):
    """Write an overlay document as clusters/c1/cluster.yaml of a fresh repository; returns its folder."""

    def write(data: dict[str, Any]) -> Path:
        root = repo({"clusters/c1/cluster.yaml": json.dumps(data, indent=2)})
        return root / "clusters" / "c1"

    return write


@pytest.fixture(scope="session")
def helm() -> str:
    """A real helm 3 for the platform chart: helm on PATH, else the official one `.ci/run` extracts into
    .ci/bin from the PyPI wheel CI already uses for kubectl (Argo CD ships helm 3). No test downloads
    anything; a test skips, saying why, only when neither is here."""
    found = shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))
    if not found:
        pytest.skip("no helm 3 on PATH or in .ci/bin (bash .ci/run fetches it before the tests; "
                    "or run .ci/fetch_kubectl.py .ci/bin helm)")
    return found
