"""Fleet throughput: every cluster of a repository rendered and checked in one process, against the Go peer.

A Flux repository's CI re-renders (``render --all --out``) and checks (``check --all``) every cluster
on every pull request. This generates fleets of 100 and 1,000 clusters mixing every sample shape
(``bench/gen_fleet.py``) and times, whole process, median of N runs:

- ``cozy-render render --all FLEET --out OUT`` and ``cozy-render check --all FLEET``, with the peak
  resident memory of each process (``wait4``);
- the baseline, ``kubectl kustomize`` run once per cluster on the very output ``render --out`` wrote
  (what a repository of plain kustomize folders costs its CI): every cluster of the 100 fleet, which
  are also the first 100 of the 1,000 fleet (the same mix of shapes), scaled to each fleet; skipped,
  and said so, without kubectl;
- the venv's bare interpreter (``python -I -S -c pass``), as a per-cluster yardstick.

Targets (issues 13 and 24): ``render --all --out`` and ``check --all`` each at >= 20x the kustomize
baseline's throughput, 1,000 clusters within 11x the time of 100, peak memory under 150 MiB at 1,000.
Both commands run as users run them, ``--jobs`` left at its default (the cores available). The ratio,
the growth and the peak are printed together, from one run. While a target is missed, a cProfile of
the 1,000-cluster render in one process (``--jobs 1``: a forked run's parent only waits) says where
the time goes.

Usage: python bench/bench_fleet.py [--runs N] [--sizes 100 1000] [--venv DIR] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proc
import targets
from gen_fleet import generate, sample_shapes
from results import write_section

SECTION = "## Fleet: `render --all --out` and `check --all` vs kustomize per cluster"
TARGET_FLEET = 1000  # the fleet size the throughput target is set for (issue 24)
TARGET_RATIO = 20.0
TARGET_GROWTH = 11.0
TARGET_PEAK_MIB = 150.0
KUSTOMIZE_SAMPLE = 100
MIB = 1024 * 1024


def measure(python: Path, sizes: list[int], work: Path, runs: int) -> list[dict[str, object]]:
    """Every figure, in interleaved rounds (each round: every fleet's render and check, then the
    kustomize sample), so a change in the machine's load shifts all of them alike."""
    fleets = []
    for size in sizes:
        fleet, out = work / f"fleet-{size}", work / f"out-{size}"
        generate(size, fleet)
        render = [*proc.cozy_render(python), "render", "--all", str(fleet), "--out", str(out)]
        check = [*proc.cozy_render(python), "check", "--all", str(fleet)]
        proc.run(render)  # warm the page cache; writes the output kustomize reads
        proc.run(check)
        clusters = sorted(p for p in out.iterdir() if p.is_dir())
        assert len(clusters) == size, f"render --all wrote {len(clusters)} clusters, expected {size}"
        fleets.append({"size": size, "fleet": fleet, "render_cmd": render, "check_cmd": check, "clusters": clusters,
                       "render_runs": [], "check_runs": []})
    # The smallest fleet's clusters are the first clusters of every larger one (gen_fleet is
    # deterministic by index), so one kustomize sample is the same output for all of them.
    smallest = fleets[0]["clusters"]
    assert isinstance(smallest, list)
    step = max(1, len(smallest) // KUSTOMIZE_SAMPLE)
    sample = smallest[::step][:KUSTOMIZE_SAMPLE]
    kubectl = proc.kubectl()
    per_cluster: list[float] = []
    if kubectl:
        proc.run([kubectl, "kustomize", str(sample[0])])  # warm
    for _ in range(runs):
        for f in fleets:
            for name in ("render", "check"):
                cmd = f[f"{name}_cmd"]
                runs_of = f[f"{name}_runs"]
                assert isinstance(cmd, list) and isinstance(runs_of, list)
                runs_of.append(proc.run(cmd))
        if kubectl:
            per_cluster.append(sum(proc.timed([kubectl, "kustomize", str(c)]) for c in sample) / len(sample))
    results = []
    for f in fleets:
        render_runs, check_runs = f["render_runs"], f["check_runs"]
        assert isinstance(render_runs, list) and isinstance(check_runs, list)
        results.append({
            "size": f["size"],
            "render": statistics.median(t for t, _ in render_runs),
            "render_peak": max(m for _, m in render_runs),
            "check": statistics.median(t for t, _ in check_runs),
            "check_peak": max(m for _, m in check_runs),
            "kustomize_per_cluster": statistics.median(per_cluster) if per_cluster else None,
            "kustomize_sample": len(sample),
            "fleet": f["fleet"],
        })
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--venv", type=Path, help="existing environment with cozy-render installed")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        python = (args.venv / "bin" / "python") if args.venv else proc.build_venv(Path(scratch) / "venv")
        text = run(python, args, Path(scratch))
    print(text)
    if args.write:
        write_section(SECTION, text)


def run(python: Path, args: argparse.Namespace, work: Path) -> str:
    bare = statistics.median(proc.timed(proc.bare_interpreter(python)) for _ in range(max(10, args.runs)))
    results = measure(python, args.sizes, work, args.runs)
    kubectl = proc.kubectl()
    lines = [
        SECTION,
        "",
        f"Fleets generated by `bench/gen_fleet.py` ({len(sample_shapes())} sample shapes, round robin). Median of "
        f"{args.runs} runs, whole process, `--jobs` at its default (the cores available), helm not on PATH (so `check` "
        "runs the output schemas and every Python rule, not the chart check: bench_effective.py prices that), "
        "cozy-render installed from a "
        f"wheel with bytecode ({'yes' if proc.has_bytecode(python) else 'NO'}), rounds interleaved. kubectl "
        f"kustomize: once per cluster over the output `render --out` wrote for the {args.sizes[0]:,} clusters every "
        f"fleet starts with (at most {KUSTOMIZE_SAMPLE}, evenly spaced), mean per cluster, scaled to each fleet. "
        f"Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}.",
        f"Reproduce: `.venv/bin/python bench/bench_fleet.py --runs {args.runs} --sizes "
        f"{' '.join(map(str, args.sizes))} --write` (or `bench/run.py`).",
        "",
        "| clusters | command | median s | clusters/s | ms per cluster | peak MiB |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        n = r["size"]
        assert isinstance(n, int)
        for name in ("render", "check"):
            t = r[name]
            peak = r[f"{name}_peak"]
            assert isinstance(t, float) and isinstance(peak, int)
            command = "render --all --out" if name == "render" else "check --all"
            lines.append(f"| {n:,} | cozy-render {command} | {t:.2f} | {n / t:,.0f} | {t / n * 1000:.2f} | "
                         f"{peak / MIB:.0f} |")
        k = r["kustomize_per_cluster"]
        if isinstance(k, float):
            lines.append(f"| {n:,} | kubectl kustomize per cluster (x{n:,}) | {k * n:.2f} | {1 / k:,.0f} | "
                         f"{k * 1000:.2f} | |")
    lines.append(f"| | bare interpreter (`python -I -S -c pass`) | {bare:.4f} | | {bare * 1000:.2f} | |")
    lines.append("")
    missed = False
    for r in results:
        n, k = r["size"], r["kustomize_per_cluster"]
        assert isinstance(n, int)
        for name in ("render", "check"):
            t = r[name]
            assert isinstance(t, float)
            command = "render --all --out" if name == "render" else "check --all"
            if isinstance(k, float):
                ratio = k * n / t
                label = f"{n:,} clusters, {command}, throughput / kubectl kustomize per cluster"
                starts = f"{t / n / bare:.2f} bare interpreter starts per cluster"
                if n >= TARGET_FLEET:
                    missed |= ratio < TARGET_RATIO
                    lines.append(targets.line(label, ratio, ">=", TARGET_RATIO, "x", digits=1, note=starts))
                else:  # the target is a fleet's (issue 24: 1,000 clusters); a small one pays the start-up more
                    lines.append(f"- {label}: {ratio:.1f}x; {starts}")
            else:
                lines.append(f"- {n:,} clusters, {command}: kubectl kustomize baseline not measured (kubectl is not "
                             f"on PATH); {t / n / bare:.2f} bare interpreter starts per cluster.")
    if len(results) >= 2:
        small, large = results[0], results[-1]
        for name in ("render", "check"):
            a, b = small[name], large[name]
            assert isinstance(a, float) and isinstance(b, float)
            growth = b / a
            missed |= growth > TARGET_GROWTH
            scale = large["size"] / small["size"]  # type: ignore[operator]
            lines.append(targets.line(f"growth {small['size']:,} -> {large['size']:,} clusters ({scale:.0f}x), "
                                      f"{name}, time", growth, "<=", TARGET_GROWTH, "x", digits=1))
    big = results[-1]
    for name in ("render", "check"):
        peak = big[f"{name}_peak"]
        assert isinstance(peak, int)
        missed |= peak / MIB >= TARGET_PEAK_MIB
        lines.append(targets.line(f"peak memory at {big['size']:,} clusters, {name}", peak / MIB, "<",
                                  TARGET_PEAK_MIB, " MiB", digits=0))
    if not kubectl:
        lines.append("- kubectl is not on PATH: the kustomize baseline was skipped (CI fetches it with "
                     "`.ci/fetch_kubectl.py`).")
    if missed:
        fleet = big["fleet"]
        assert isinstance(fleet, Path)
        lines += ["", "A target is missed; where the time goes:", ""]
        lines += proc.profile(python, ["render", "--all", str(fleet), "--out", str(fleet.parent / "profiled"),
                                       "--jobs", "1"])
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
