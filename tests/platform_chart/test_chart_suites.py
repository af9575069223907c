"""The chart's own helm-unittest suites, every case of both vendored versions, against real helm.

Passing them proves two things at once: the vendored copy is the chart its tests describe, and the
harness (tests/platform_chart/harness.py) reads the suites as helm-unittest does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.platform_chart import chart_dir, shipped_versions
from tests.platform_chart.harness import Case, ChartRunner, cases, run_case

SUITES = Path(__file__).parent / "suites"
ALL_CASES = [(version, case) for version in shipped_versions() for case in cases(SUITES / version)]


def _id(item: tuple[str, Case]) -> str:
    version, case = item
    return f"{version}/{case.suite.stem}/{case.index}"


@pytest.fixture(scope="module")
def runners(helm: str, scratch: Path) -> dict[str, ChartRunner]:
    return {version: ChartRunner(helm, chart_dir(version), scratch / version) for version in shipped_versions()}


def test_every_vendored_version_has_its_suites() -> None:
    counts = {version: len(cases(SUITES / version)) for version in shipped_versions()}
    assert counts["main-3c780ac"] == 139  # reference/platform-chart/README.md: 139 cases at main
    assert all(counts.values()), counts


@pytest.mark.parametrize("item", ALL_CASES, ids=[_id(i) for i in ALL_CASES])
def test_suite_case(item: tuple[str, Case], runners: dict[str, ChartRunner]) -> None:
    version, case = item
    runner = runners[version]
    runner.scratch.mkdir(parents=True, exist_ok=True)
    failures = run_case(runner, case)
    assert failures == [], f"{case.suite.name}: {case.name}"
