"""What the effective tests share: the real helm binary they run the vendored chart with."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def helm() -> str:
    found = shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))
    if not found:
        pytest.skip("no helm 3 on PATH or in .ci/bin (bash .ci/run fetches it before the tests)")
    return found
