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

`--tricks` measures instead each start-up trick docs/startup-budget.md lists, on and off, in the same
interleaved runs: "off" runs the same command with what the trick avoids done up front (the module it
keeps off the path imported first, the collector's threshold left alone, Click parsing the arguments),
so the median difference is what the trick saves. In-process figures (the NamedTuple annotations rule,
the cache's remembered code listing) are medians of repeats in one process. Note `uptime` with the
figures: the machine may be shared.

Usage: python bench/bench_startup.py [--runs N] [--venv DIR] [--compare DIR] [--write]
       python bench/bench_startup.py --tricks [--runs N] [--venv DIR]
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
from ruamel.yaml import YAML
YAML(typ="safe").compose_all("{}")
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
    parser.add_argument("--tricks", action="store_true", help="each start-up trick on and off (docs/startup-budget.md)")
    parser.add_argument("--baseline", type=Path, metavar="TREE",
                        help="with --tricks: also time the renderer/ of this source tree (an older commit, "
                             "`git archive COMMIT | tar -x -C TREE`) on the same runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        python = (args.venv.absolute() / "bin" / "python") if args.venv else proc.build_venv(Path(scratch) / "venv")
        text = tricks(python, args.runs, args.baseline) if args.tricks else run(python, args)
    print(text)
    if args.write and not args.tricks:
        write_section(SECTION, text)


# `cozy-render ARGS` through the console entry, after PRE (Python run first: what a trick avoids, done).
_ENTRY = "import sys; sys.argv[0] = 'cozy-render'; {pre}\nfrom renderer.entry import main; main()"
_CLICK = "import sys; sys.argv[0] = 'cozy-render'\nfrom renderer.cli import main; main()"
# Each trick: (name, what it avoids, the command it is measured on, Python run first for "off").
# The command is "render", "cmp" (the sample's cmp generate) or "hit" (render on a cache hit).
TRICKS = [
    ("Click-free fast path (renderer.entry.fast_path)", "Click, the command tree", "render", None),
    ("collector threshold (entry.GC_YOUNG_THRESHOLD)", "~18 young collections",
     "render", "import gc; gc.set_threshold = lambda *a: None"),
    ("fastjsonschema without its __init__ (lightimport)", "the schema compilers, decimal",
     "render", "import fastjsonschema"),
    ("Decimal stand-in (jsonschema_runtime)", "decimal (C _decimal)", "render", "import decimal"),
    ("which() without shutil (renderer.executables)", "shutil, bz2, lzma, fnmatch", "render", "import shutil"),
    ("lookups without jinja2 (renderer.load.templating)", "jinja2", "render", "import jinja2.sandbox"),
    ("no dataclasses on the path", "dataclasses, inspect", "render", "import dataclasses"),
    ("lazy patterns (renderer.lazyre)", "compiling every pattern at import", "render",
     "import renderer.lazyre as l; l.lazy = lambda p, f=0: (lambda o: (o.compiled(), o)[1])(l.LazyPattern(p, f))"),
    ("function-level imports, upper bound", "every module of the package", "render",
     "import contextlib, importlib, pkgutil, renderer\n"
     "for m in pkgutil.walk_packages(renderer.__path__, 'renderer.'):\n"
     "    with contextlib.suppress(Exception):\n"
     "        m.name.endswith('__main__') or importlib.import_module(m.name)"),
    ("cache hit without json, re, pathlib, typing", "json, re, pathlib, typing", "hit",
     "import json, re, pathlib, typing"),
    ("cache hit's SHA-256 without hashlib", "hashlib (OpenSSL)", "hit", "import hashlib"),
    ("cmp generate: Click-free fast path", "Click, the command tree", "cmp", None),
]

# In one process: a NamedTuple module with and without `from __future__ import annotations`.
_NAMEDTUPLE = r"""
import statistics, sys, time, renderer.requests as mod
source = open(mod.__file__, encoding="utf-8").read()
def once(prefix):
    code = compile(prefix + source, mod.__file__, "exec")
    start = time.perf_counter()
    exec(code, {"__name__": "renderer.requests_probe"})
    return time.perf_counter() - start
for prefix in ("", "from __future__ import annotations\n") * 3:
    once(prefix)
runs = int(sys.argv[1])
plain = [once("") for _ in range(runs)]
future = [once("from __future__ import annotations\n") for _ in range(runs)]
print(statistics.median(plain) * 1000, statistics.median(future) * 1000)
"""
# In one process: the render cache's code fingerprint with the remembered listing and walking the package.
_LISTING = """
import statistics, sys, tempfile, time
from renderer import cache
runs = int(sys.argv[1])
with tempfile.TemporaryDirectory() as folder:
    cache.fingerprint(folder)
    def timed(where):
        start = time.perf_counter(); cache.fingerprint(where); return time.perf_counter() - start
    memo = [timed(folder) for _ in range(runs)]
    walk = [timed(None) for _ in range(runs)]
print(statistics.median(memo) * 1000, statistics.median(walk) * 1000)
"""


def tricks(python: Path, runs: int, baseline: Path | None = None) -> str:
    """Each trick on and off, interleaved, on the richest sample: medians and ratios of one run; with
    ``baseline``, the same commands run by that source tree's renderer/ too (what a removed trick saved)."""
    sample, _count = richest_sample(python)
    source_path = sample.relative_to(REPO).as_posix()
    with tempfile.TemporaryDirectory() as tmp:
        envs = {"render": proc.ENV, "cmp": {**proc.ENV, "ARGOCD_APP_SOURCE_PATH": source_path},
                "hit": {**proc.ENV, "COZY_RENDER_CACHE_DIR": str(Path(tmp) / "cache")}}
        argv = {"render": ["render", str(sample)], "cmp": ["cmp", "generate"], "hit": ["render", str(sample)]}
        cwd = {"render": Path(tmp), "cmp": sample, "hit": Path(tmp)}
        on = {kind: ([str(python), "-c", _ENTRY.format(pre=""), *argv[kind]], envs[kind], cwd[kind])
              for kind in ("render", "cmp", "hit")}
        # Each "off" is timed right after an "on" of the same command (pairs, in turn): on a shared machine
        # the load drifts within a run, and each pair's ratio sees the same load on both sides.
        pairs: dict[str, tuple[str, tuple[list[str], dict[str, str], Path]]] = {}
        for name, _avoids, kind, pre in TRICKS:
            off = _CLICK if pre is None else _ENTRY.format(pre=pre)
            pairs[name] = (kind, ([str(python), "-c", off, *argv[kind]], envs[kind], cwd[kind]))
        if baseline is not None:
            for kind in ("render", "cmp"):
                pairs[f"baseline:{kind}"] = (kind, ([str(python), "-c", _ENTRY.format(pre=""), *argv[kind]],
                                                    {**envs[kind], "PYTHONPATH": str(baseline.absolute())},
                                                    cwd[kind]))
        for cmd, env, where in [*on.values(), *(case for _, case in pairs.values())]:  # warm-up, not counted
            proc.timed(cmd, env, where)
        times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in pairs}
        for _ in range(runs):
            for name, (kind, (cmd, env, where)) in pairs.items():
                times[name][0].append(proc.timed(*on[kind]))
                times[name][1].append(proc.timed(cmd, env, where))
    load = os.getloadavg()
    lines = [f"Start-up tricks on the richest sample (`{source_path}`): {runs} pairs each (the code as it is, "
             "then the trick off, timed one after the other), whole process (`python -c` through renderer.entry); "
             f"medians, and the median of the pairs' ratios. Load average {load[0]:.2f} {load[1]:.2f} "
             f"{load[2]:.2f}, {os.cpu_count()} CPUs, Python {platform.python_version()}.",
             f"Reproduce: `.venv/bin/python bench/bench_startup.py --tricks --runs {runs} --venv .venv`.", "",
             "| trick | keeps off the path | command | on ms | off ms | saves ms | off / on |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: |"]

    def figures(name: str) -> tuple[float, float, float]:
        ons, offs = times[name]
        return (statistics.median(ons) * 1000, statistics.median(offs) * 1000,
                statistics.median(b / a for a, b in zip(ons, offs, strict=True)))

    for name, avoids, kind, _pre in TRICKS:
        on_ms, off_ms, ratio = figures(name)
        lines.append(f"| {name} | {avoids} | {kind} | {on_ms:.1f} | {off_ms:.1f} | {off_ms - on_ms:.1f} | "
                     f"{ratio:.2f} |")
    if baseline is not None:
        lines.append("")
        for kind in ("render", "cmp"):
            here, there, ratio = figures(f"baseline:{kind}")
            lines.append(f"- {kind} by the renderer/ of `{baseline}`: {there:.1f} ms; this tree's: {here:.1f} ms, "
                         f"**{1 / ratio:.2f}x** that (median of the pairs)")
    plain, future = (float(x) for x in _child(python, _NAMEDTUPLE, runs).split())
    memo, walk = (float(x) for x in _child(python, _LISTING, runs).split())
    lines += ["", "In one process (median of the same number of repeats):", "",
              f"- renderer/requests.py executed with evaluated annotations: {plain:.2f} ms; with "
              f"`from __future__ import annotations`: {future:.2f} ms (+{future - plain:.2f} ms, "
              f"{future / plain:.2f}x): the NamedTuple rule",
              f"- the cache's code fingerprint with the remembered listing: {memo:.2f} ms; walking the package: "
              f"{walk:.2f} ms ({walk / memo:.2f}x)"]
    return "\n".join(lines) + "\n"


def _child(python: Path, code: str, runs: int) -> str:
    with tempfile.TemporaryDirectory() as neutral:  # not the checkout: measure the installed package
        return subprocess.run([str(python), "-c", code, str(runs)], capture_output=True, text=True, check=True,
                              env=proc.ENV, cwd=neutral).stdout.strip()


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
