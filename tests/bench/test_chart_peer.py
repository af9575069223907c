"""bench/bench_chart_peer.py: a smoke run on a tiny fleet prints its whole report, and at the targets' fleet
size its four targets read back through targets.collect (the Targets summary of RESULTS.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.bench import BENCH, bench_module


def _peer():
    sys.path.insert(0, str(BENCH))  # it imports gen_fleet, proc, targets and results from its folder
    try:
        return bench_module("bench_chart_peer")
    finally:
        sys.path.remove(str(BENCH))


COMMANDS = ["check --all --chart helm", "effective --all", "check --all --chart model", "helm template loop"]


def test_a_quick_run_prints_every_row_and_ratio() -> None:
    helm = shutil.which("helm") or shutil.which("helm", path=str(BENCH.parent / ".ci" / "bin"))
    if not helm:
        pytest.skip("no helm 3 on PATH or in .ci/bin (bash .ci/run fetches it before the tests)")
    done = subprocess.run([sys.executable, str(BENCH / "bench_chart_peer.py"), "--quick", "--clusters", "3",
                           "--helm", helm], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    text = done.stdout
    assert text.startswith(_peer().SECTION)
    assert "3 clusters from bench/gen_fleet.py" in text and "median of 1 interleaved runs" in text
    assert " before, " in text.split("load average ", 1)[1].splitlines()[0]  # how busy the machine was
    for name in COMMANDS:
        assert f"\n| {name} | " in text, name
    assert "\n| helm's CPU floor (paired, below) | - | " in text
    for name in ("check --all --chart helm", "effective --all"):
        assert f"- 3 clusters: {name}, the loop's wall time / its own: " in text
        assert f"- 3 clusters: {name}, CPU / helm's CPU floor: " in text
    assert "- helm's CPU floor: 3 `helm template` processes, one a cluster" in text
    assert "(target " not in text  # below the targets' fleet size: figures, no verdicts


def test_at_the_targets_fleet_size_the_four_targets_are_stated() -> None:
    peer = _peer()
    targets = bench_module("targets")
    wall = {"check --all --chart helm": 10.0, "effective --all": 30.0, "check --all --chart model": 3.0,
            "helm template loop": 60.0}
    cpu = {"check --all --chart helm": 14.0, "effective --all": 20.0, "check --all --chart model": 3.0,
           "helm template loop": 52.0}
    text = peer.report(1000, 3, "v3.17.2", wall, cpu, templating=52.0, starts=38.0)
    found = [(t.label, t.figure, t.target, t.met) for t in targets.collect(text)]
    assert found == [
        ("1,000 clusters: check --all --chart helm, the loop's wall time / its own", "6.00x", ">= 4x", True),
        ("1,000 clusters: check --all --chart helm, CPU / helm's CPU floor", "1.00x", "<= 1.25x", True),
        ("1,000 clusters: effective --all, the loop's wall time / its own", "2.00x", ">= 4x", False),
        ("1,000 clusters: effective --all, CPU / helm's CPU floor", "1.43x", "<= 1.25x", False),
    ]
    assert "**14.00 s** (14.0 ms a cluster)" in text


def test_a_floor_lost_in_noise_is_a_miss_not_a_division_by_zero() -> None:
    peer = _peer()
    targets = bench_module("targets")
    ones = dict.fromkeys(COMMANDS, 1.0)
    text = peer.report(1000, 1, "v3", ones, ones, templating=1.0, starts=10.0)
    floors = [t for t in targets.collect(text) if "floor" in t.label]
    assert len(floors) == 2 and not any(t.met for t in floors)
