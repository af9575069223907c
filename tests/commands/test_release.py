"""A release users can pin (issue 23, item 5): one version in pyproject.toml, renderer/__init__.py, the
newest CHANGELOG.md entry, the README's pre-commit ``rev:`` and the Argo CD image; ``--version`` prints
it with the vendored chart versions."""

from __future__ import annotations

import re

from renderer import __version__
from renderer.platform_chart import DEFAULT_VERSION, shipped_versions
from tests.conftest import REPO


def _text(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


def test_one_version_everywhere() -> None:
    found = re.search(r'^version = "([^"]+)"', _text("pyproject.toml"), re.M)  # tomllib is 3.11+
    assert found is not None
    version = found.group(1)
    assert version == __version__
    assert re.match(r"^\d+\.\d+\.\d+$", version)
    newest = re.search(r"^## (\S+)$", _text("CHANGELOG.md"), re.M)
    assert newest is not None and newest.group(1) == version
    assert f"Tag `v{version}`" in _text("CHANGELOG.md")
    assert re.findall(r"^\s+rev: (v\S+)", _text("README.md"), re.M) == [f"v{version}"]
    for path in ("docs/argocd/install/repo-server-sidecar.yaml", "docs/argocd/Dockerfile", "README.md"):
        assert set(re.findall(r"cozy-render:(\d[\w.]*)", _text(path))) == {version}, path


def test_version_prints_the_release_and_the_vendored_charts(cli) -> None:
    code, out, _ = cli("--version")
    assert code == 0
    first, *rest = out.splitlines()
    assert first == f"cozy-render {__version__}"
    for version in shipped_versions():
        assert any(line.split()[0] == version for line in rest[1:]), version
    assert any(line.split()[:2] == [DEFAULT_VERSION, "(default)"] for line in rest[1:])
