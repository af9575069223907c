"""Numbers as helm reads them (issue 35 item 4): values reach the chart as float64, so the model
rounds an integer beyond 2^53 as helm does, and keeps what helm keeps exact (a string parsed by
Sprig ``int``). Judged against real helm on both vendored versions."""

from __future__ import annotations

from typing import Any

import pytest

from renderer.effective.helm import offline_chart, template, values_files
from renderer.load.variants import Variants
from renderer.platform_chart import chart_dir, shipped_versions
from renderer.platform_chart.model import as_helm_reads
from renderer.resolve.platform import PlatformFacts

RATIOS: list[Any] = [9007199254740993, 2 ** 53, -(2 ** 53) - 1, 2 ** 60 + 1, 123456789012345678, 4,
                     "9007199254740993", 9007199254740993.0]


def test_integers_round_to_float64_and_nothing_else_changes() -> None:
    tree = {"a": [9007199254740993, True, "9007199254740993", 1.5], "b": {"c": 2 ** 53}}
    assert as_helm_reads(tree) == {"a": [9007199254740992, True, "9007199254740993", 1.5], "b": {"c": 2 ** 53}}
    assert tree["a"][0] == 9007199254740993  # the input is not modified
    small = {"x": [1, 2], "y": {"z": 3}}
    assert as_helm_reads(small) is small  # nothing to round: shared, not copied
    assert as_helm_reads(10 ** 400) == 10 ** 400  # beyond float64: left for the rules


@pytest.mark.parametrize("version", shipped_versions())
def test_cpu_allocation_ratio_renders_as_helm_renders_it(version: str, helm: str) -> None:
    with offline_chart(chart_dir(version)) as copy:
        for ratio in RATIOS:
            values = {"resources": {"cpuAllocationRatio": ratio}}
            rendered = template(helm, copy, values_files(copy, "isp-full"), values)
            assert rendered.failure is None
            theirs = rendered.packages()["cozystack.kubevirt"]["spec"]["components"]["kubevirt"]["values"]
            facts = PlatformFacts(Variants().catalogue(), "isp-full", values, version=version)
            ours = facts.rendered_packages["cozystack.kubevirt"].values[("kubevirt", "values", "cpuAllocationRatio")]
            assert (ours, type(ours)) == (theirs["cpuAllocationRatio"], int), ratio
