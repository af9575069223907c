"""Cold start-up of `render PATH` and `cmp generate` against their peers, whole process, same machine, same run.

Argo CD runs `cozy-render cmp generate` once per Application per refresh, and CI runs `render PATH`
per cluster, so process start-up is the cost that matters. For the richest bundled sample (largest
rendered output) this times, interleaved, median of N runs:

- `cozy-render render <sample>` and `cozy-render cmp generate` (in the sample's folder, with the
  ARGOCD_APP_SOURCE_PATH Argo CD sets), each on a render-cache miss (no `COZY_RENDER_CACHE_DIR`)
  and on a hit (the cache folder set and the entry present: what every Application whose inputs a
  commit did not touch costs);
- `kubectl kustomize <dir>` over the same objects written by `render --out` (the Go peer users
  would otherwise run); skipped, and said so, without kubectl;
- the bare interpreter of the same environment, `python -I -S -c pass` (the floor).

Targets (issue 13): <= 1.0x kubectl kustomize on a miss, <= 0.5x on a hit. While one is missed, the
result says where the time goes: `python -X importtime` (top-level imports) and a cProfile.

cozy-render is measured installed from a wheel (bytecode compiled at install time) into a fresh
virtual environment this script builds with pip (``bench/proc.py``). `--venv DIR` reuses an existing
environment that has cozy-render installed. `--compare DIR` also times the cozy-render of another
environment (an older build, say) in the same interleaved runs, and prints each figure's ratio to it:
the way to measure a change on a busy machine.

Usage: python bench/bench_startup.py [--runs N] [--venv DIR] [--compare DIR] [--write]
       (--write updates bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proc
import targets
from results import write_section

REPO = proc.REPO
SECTION = "## Start-up: cold `render` and `cmp generate` vs kustomize"
TARGET_MISS = 1.0
TARGET_HIT = 0.5


def richest_sample(python: Path) -> tuple[Path, int]:
    """The sample with the largest output, and its object count."""
    best: tuple[int, Path, int] | None = None
    for cluster in sorted((REPO / "overlays" / "clusters").glob("*/cluster.yaml")):
        out = subprocess.run([*proc.cozy_render(python), "render", str(cluster.parent)], capture_output=True,
                             text=True, env=proc.ENV)
        if out.returncode != 0:
            continue
        count = len([d for d in re.split(r"^---$", out.stdout, flags=re.M) if d.strip()])
        if best is None or len(out.stdout) > best[0]:
            best = (len(out.stdout), cluster.parent, count)
    if best is None:
        sys.exit("no sample cluster renders")
    return best[1], best[2]


def import_profile(python: Path, sample: Path, top: int = 12) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory() as neutral:  # not the checkout: measure the installed package
        done = subprocess.run([str(python), "-X", "importtime", "-m", "renderer", "render", str(sample)],
                              capture_output=True, text=True, check=True, env=proc.ENV, cwd=neutral)
    rows = []
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) <= 1:  # top-level imports only: their cumulative time
            rows.append((m.group(4), int(m.group(2)) / 1000))
    return sorted(rows, key=lambda r: -r[1])[:top]


# The render's own work without the start-up: the same command body the console script runs for
# `render PATH` (renderer.entry.fast_path), called once to load everything, then timed on repeats.
WARM = """
import io, statistics, sys, time
from renderer.entry import fast_path
runs = []
for _ in range(int(sys.argv[2]) + 1):
    body = fast_path(["render", sys.argv[1]])
    real, sys.stdout = sys.stdout, io.StringIO()
    start = time.perf_counter()
    try:
        assert body() == 0
    finally:
        sys.stdout = real
    runs.append(time.perf_counter() - start)
print(statistics.median(runs[1:]) * 1000)
"""


# cozy-render's modules a render loads, in the order it loads them (one render, in a child).
LOADED = """
import io, sys
from renderer.entry import fast_path
body = fast_path(["render", sys.argv[1]])
real, sys.stdout = sys.stdout, io.StringIO()
body()
sys.stdout = real
print(" ".join(name for name in sys.modules if name.startswith("renderer")))
"""
# Those modules imported, and the YAML loader built, with nothing rendered: the start-up of the code alone.
IMPORT_ONLY = """
import sys
from importlib import import_module
for name in sys.argv[1].split():
    import_module(name)
from renderer.load import yamlio
yamlio._loader("{}")
"""


def render_modules(python: Path, sample: Path) -> str:
    with tempfile.TemporaryDirectory() as neutral:  # not the checkout: measure the installed package
        done = subprocess.run([str(python), "-c", LOADED, str(sample)], capture_output=True, text=True, check=True,
                              env=proc.ENV, cwd=neutral)
    return done.stdout.strip()


def warm_render_ms(python: Path, sample: Path, runs: int) -> float:
    """Median ms of the render body run again in a process that has already rendered once."""
    with tempfile.TemporaryDirectory() as neutral:  # not the checkout: measure the installed package
        done = subprocess.run([str(python), "-c", WARM, str(sample), str(runs)], capture_output=True, text=True,
                              check=True, env=proc.ENV, cwd=neutral)
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--venv", type=Path, help="existing environment with cozy-render installed")
    parser.add_argument("--compare", type=Path, metavar="DIR",
                        help="another environment with cozy-render installed, timed in the same runs (baseline)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        python = (args.venv / "bin" / "python") if args.venv else proc.build_venv(Path(scratch) / "venv")
        text = run(python, args)
    print(text)
    if args.write:
        write_section(SECTION, text)


def run(python: Path, args: argparse.Namespace) -> str:
    sample, count = richest_sample(python)
    cozy = proc.cozy_render(python)
    kubectl = proc.kubectl()
    source_path = sample.relative_to(REPO).as_posix()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        subprocess.run([*cozy, "render", str(sample), "--out", str(out)], check=True, env=proc.ENV)
        cmp_env = {**proc.ENV, "ARGOCD_APP_SOURCE_PATH": source_path}
        cached = {"COZY_RENDER_CACHE_DIR": str(Path(tmp) / "cache")}
        cases: dict[str, tuple[list[str], dict[str, str], Path | None]] = {
            "render (cache miss)": ([*cozy, "render", str(sample)], proc.ENV, None),
            "render (cache hit)": ([*cozy, "render", str(sample)], {**proc.ENV, **cached}, None),
            "cmp generate (cache miss)": ([*cozy, "cmp", "generate"], cmp_env, sample),
            "cmp generate (cache hit)": ([*cozy, "cmp", "generate"], {**cmp_env, **cached}, sample),
            "bare python": (proc.bare_interpreter(python), proc.ENV, None),
            # The floor under a cache miss: the venv's interpreter with site, importing the YAML library
            # every load needs (nothing else).
            "python -c 'import ruamel.yaml'": ([str(python), "-c", "import ruamel.yaml"], proc.ENV, None),
            # The floor under a cache hit: the console script pip writes imports `re` before cozy-render runs.
            "python -c 'import re'": ([str(python), "-c", "import re"], proc.ENV, None),
            # What a miss cannot do without: cozy-render's code a render runs, loaded, with nothing rendered.
            "the render's code loaded, nothing rendered": (
                [str(python), "-c", IMPORT_ONLY, render_modules(python, sample)], proc.ENV, Path(tmp)),
        }
        if kubectl:
            cases["kubectl kustomize"] = ([kubectl, "kustomize", str(out)], proc.ENV, None)
        if args.compare:
            other = proc.cozy_render(args.compare / "bin" / "python")
            other_cache = {"COZY_RENDER_CACHE_DIR": str(Path(tmp) / "cache-baseline")}
            for name, (cmd, env, cwd) in list(cases.items()):
                if name.startswith(("render", "cmp")):
                    cached_env = {**env, **other_cache} if "hit" in name else env
                    cases[f"{name} [baseline]"] = ([*other, *cmd[len(cozy):]], cached_env, cwd)
        for cmd, env, cwd in cases.values():  # warm the page cache and the render cache; not counted
            proc.timed(cmd, env, cwd)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (cmd, env, cwd) in cases.items():
                samples[name].append(proc.timed(cmd, env, cwd))
    med = {name: statistics.median(v) * 1000 for name, v in samples.items()}
    lines = [
        SECTION,
        "",
        f"Sample: `{sample.relative_to(REPO)}` ({count} objects, the richest). Median of {args.runs} interleaved "
        f"runs, whole process, cozy-render installed from a wheel with bytecode "
        f"({'yes' if proc.has_bytecode(python) else 'NO'}) into a fresh venv; `cmp generate` runs in the sample's "
        f"folder with `ARGOCD_APP_SOURCE_PATH={source_path}`. Machine: {platform.machine()}, {os.cpu_count()} "
        f"CPUs, Python {platform.python_version()}.",
        f"Reproduce: `.venv/bin/python bench/bench_startup.py --runs {args.runs} --write` (or `bench/run.py`).",
        "",
        "| command | median ms |",
        "| --- | ---: |",
    ]
    for name, ms in med.items():
        lines.append(f"| {name} | {ms:.1f} |")
    lines.append("")
    missed = False
    for name in [n for n in med if n.startswith(("render", "cmp")) and not n.endswith("[baseline]")]:
        target = TARGET_HIT if "hit" in name else TARGET_MISS
        if "kubectl kustomize" in med:
            ratio = med[name] / med["kubectl kustomize"]
            missed |= ratio > target
            lines.append(targets.line(f"{name} / kubectl kustomize", ratio, "<=", target, "x",
                                      note=f"{med[name] / med['bare python']:.2f}x the bare interpreter"))
        else:
            lines.append(f"- {name} / kubectl kustomize: not measured (kubectl is not on PATH); "
                         f"{med[name] / med['bare python']:.2f}x the bare interpreter")
    if args.compare:
        lines.append(f"- baseline: cozy-render of `{args.compare}`, timed in the same runs")
        for name in [n for n in med if n.endswith("[baseline]")]:
            mine = name.removesuffix(" [baseline]")
            lines.append(f"- {mine}: **{med[mine] / med[name]:.2f}x** the baseline ({med[name]:.1f} ms there)")
    hit_floor = med["python -c 'import re'"]
    if "kubectl kustomize" in med:
        lines.append(f"- floor of a cache hit, the interpreter importing the `re` that pip's console-script wrapper "
                     f"imports before cozy-render runs: {hit_floor:.1f} ms = "
                     f"**{hit_floor / med['kubectl kustomize']:.2f}x** kubectl kustomize; the hit's own look-up and "
                     f"replay take the other {med['render (cache hit)'] - hit_floor:.1f} ms")
    floor = med["python -c 'import ruamel.yaml'"]
    lines.append(f"- floor of a cache miss, the interpreter importing ruamel.yaml alone: {floor:.1f} ms"
                 + (f" = **{floor / med['kubectl kustomize']:.2f}x** kubectl kustomize" if "kubectl kustomize" in med
                    else ""))
    warm = warm_render_ms(python, sample, args.runs)
    miss = med["render (cache miss)"]
    lines.append(f"- the render itself, run again in a process that has rendered once: {warm:.1f} ms; the other "
                 f"{miss - warm:.1f} ms of a miss start the interpreter and load the code a render runs (the "
                 "libraries, cozy-render's modules and schema validators, first-use set-up)")
    loaded = med["the render's code loaded, nothing rendered"]
    lines.append(f"- cozy-render's modules and schema validators a render runs, imported with its YAML loader built "
                 f"and nothing rendered: {loaded:.1f} ms"
                 + (f" = **{loaded / med['kubectl kustomize']:.2f}x** kubectl kustomize: a new interpreter that "
                    "loads the code a render runs costs that much before it renders anything"
                    if "kubectl kustomize" in med else ""))
    if "kubectl kustomize" in med:
        left = med["kubectl kustomize"] - floor
        lines.append(f"- under the 1.0x target, {left:.1f} ms are left past that floor for loading cozy-render's own "
                     f"modules and validators and rendering, which take {miss - floor:.1f} ms of a miss here, "
                     f"{miss - floor - warm:.1f} ms of it loading (the profiles below say where): the miss is the "
                     "cost of loading the product's code into a new interpreter per command, not of the render. "
                     "PyYAML's libyaml loader in place of ruamel.yaml costs more to import (124M against 100M "
                     "instructions, valgrind --tool=callgrind), so the YAML library itself sets the floor.")
    if missed or "kubectl kustomize" not in med:
        lines += ["", "Where a cache-miss `render` start-up goes (`python -X importtime`, top-level imports, "
                  "cumulative ms, one run; importtime itself inflates these):", ""]
        lines += [f"- {mod}: {ms:.1f}" for mod, ms in import_profile(python, sample)]
        lines += [""]
        lines += proc.profile(python, ["render", str(sample)], top=8)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
