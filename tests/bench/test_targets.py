"""bench/targets.py: a target is printed next to its figure, a miss is marked, and run.py finds every one."""

from __future__ import annotations

import sys

from tests.bench import BENCH, bench_module


def _targets():
    return bench_module("targets")


def test_a_met_and_a_missed_target_read_back_with_their_verdicts() -> None:
    targets = _targets()
    section = "\n".join([
        "## Start-up: cold render",
        "",
        "| command | median ms |",
        targets.line("render (cache hit) / kubectl kustomize", 0.42, "<=", 0.5, "x"),
        targets.line("fleet of 1,000, render --all --out / kustomize", 11.6, ">=", 20, "x", digits=1,
                     note="0.63 bare interpreter starts per cluster"),
        "- a plain note with **bold** that states no target",
    ])
    found = targets.collect(section)
    assert [(t.label, t.figure, t.target, t.met) for t in found] == [
        ("render (cache hit) / kubectl kustomize", "0.42x", "<= 0.5x", True),
        ("fleet of 1,000, render --all --out / kustomize", "11.6x", ">= 20x", False),
    ]
    summary = targets.summary([("Start-up", section)])
    assert summary.startswith("## Targets: 1 of 2 met; **1 MISSED**")
    assert "| Start-up | fleet of 1,000, render --all --out / kustomize | 11.6x | >= 20x | **MISSED** |" in summary


def test_bounds_are_inclusive_or_strict_as_written() -> None:
    targets = _targets()
    assert targets.met(3.0, "<=", 3) and not targets.met(3.0, "<", 3)
    assert targets.met(20.0, ">=", 20) and not targets.met(20.0, ">", 20)
    assert "**MISSED**" in targets.line("torn cache entries", 1, "<=", 0, digits=0)



def test_every_bench_that_states_a_target_states_it_through_targets_line() -> None:
    """A hand-written "(target ...)" bullet would escape the summary at the top of RESULTS.md."""
    offenders = [p.name for p in sorted(BENCH.glob("bench_*.py")) if "(target " in p.read_text()]
    assert offenders == []


def test_run_summary_is_rebuilt_from_the_sections_after_one_bench_rewrote_its_own() -> None:
    targets = _targets()
    sys.path.insert(0, str(BENCH))
    try:
        run = bench_module("run")  # it imports the other bench scripts from its folder
    finally:
        sys.path.remove(str(BENCH))
    stale = "\n".join(["# Benchmark results", "", "## Targets: 1 of 1 met", "", "| old |", "",
                       "## Start-up: cold render", "", targets.line("hit / kustomize", 0.7, "<=", 0.5, "x"), "",
                       "## Fleet: render --all", "", targets.line("1,000 clusters", 22.0, ">=", 20, "x", digits=1)])
    fresh = run.resummarise(stale)
    assert fresh.startswith("# Benchmark results\n\n## Targets: 1 of 2 met; **1 MISSED**")
    assert "| Start-up | hit / kustomize | 0.70x | <= 0.5x | **MISSED** |" in fresh
    assert "| old |" not in fresh and fresh.count("## Targets") == 1
    assert fresh.index("## Start-up") < fresh.index("## Fleet")
