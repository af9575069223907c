"""Cold start-up of `cozy-render render` against its peers, whole process, same machine, same run.

Argo CD runs the renderer once per Application per refresh, so process start-up is the cost that
matters. For the richest bundled sample (largest rendered output) this times, interleaved:

- `cozy-render render <sample>`, a full render (no render cache);
- the same with `COZY_RENDER_CACHE_DIR` set and the entry present (a cache hit: what every
  Application whose inputs a commit did not touch costs);
- `kubectl kustomize <dir>` over the same objects written by `render --out` (the Go peer users
  would otherwise run); skipped, and said so, without kubectl;
- the bare interpreter of the same environment, `python -I -S -c pass` (the floor).

cozy-render is measured the way the Argo CD sidecar runs it: installed from a wheel (bytecode
compiled at install time) into a fresh virtual environment this script builds with pip. A
development (editable) install costs ~18 ms more per process for setuptools' import hook, which
no deployment has. `--venv DIR` reuses an existing environment that has cozy-render installed.

Usage: python bench/bench_startup.py [--runs N] [--venv DIR] [--write]   (--write updates bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import write_section

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Start-up: cold `render` vs kustomize"


PYTHON = Path(sys.executable)


def cozy_render_cmd() -> list[str]:
    return [str(PYTHON.with_name("cozy-render"))]


def build_venv(where: Path) -> Path:
    """A fresh venv with cozy-render installed from this checkout as a wheel (not editable)."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(REPO)], check=True, env=ENV)
    return python


def richest_sample() -> tuple[Path, int]:
    """The sample with the largest output, and its object count."""
    best: tuple[int, Path, int] | None = None
    for cluster in sorted((REPO / "overlays" / "clusters").glob("*/cluster.yaml")):
        out = subprocess.run([*cozy_render_cmd(), "render", str(cluster.parent)], capture_output=True, text=True,
                             env=ENV)
        if out.returncode != 0:
            continue
        count = len([d for d in re.split(r"^---$", out.stdout, flags=re.M) if d.strip()])
        if best is None or len(out.stdout) > best[0]:
            best = (len(out.stdout), cluster.parent, count)
    if best is None:
        sys.exit("no sample cluster renders")
    return best[1], best[2]


# An installed wheel has its .pyc files compiled at install time; a checkout run with
# PYTHONDONTWRITEBYTECODE=1 (set on some dev machines) would recompile every module on every run
# and measure the compiler, not cozy-render. Run as the sidecar would: bytecode cached.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env or ENV)
    return time.perf_counter() - start


def import_profile(sample: Path, top: int = 12) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory() as neutral:  # not the checkout: measure the installed package
        proc = subprocess.run([str(PYTHON), "-X", "importtime", "-m", "renderer", "render", str(sample)],
                              capture_output=True, text=True, check=True, env=ENV, cwd=neutral)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) <= 1:  # top-level imports only: their cumulative time
            rows.append((m.group(4), int(m.group(2)) / 1000))
    return sorted(rows, key=lambda r: -r[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--venv", type=Path, help="existing environment with cozy-render installed")
    args = parser.parse_args()

    global PYTHON
    with tempfile.TemporaryDirectory() as scratch:
        PYTHON = (args.venv / "bin" / "python") if args.venv else build_venv(Path(scratch) / "venv")
        run(args)


def run(args: argparse.Namespace) -> None:
    sample, count = richest_sample()
    render = [*cozy_render_cmd(), "render", str(sample)]
    bare = [str(PYTHON), "-I", "-S", "-c", "pass"]
    kubectl = shutil.which("kubectl")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        subprocess.run([*cozy_render_cmd(), "render", str(sample), "--out", str(out)], check=True)
        kustomize = [kubectl, "kustomize", str(out)] if kubectl else None
        cached_env = {**ENV, "COZY_RENDER_CACHE_DIR": str(Path(tmp) / "cache")}
        cases = {"render (full)": (render, ENV), "render (cache hit)": (render, cached_env),
                 "bare python": (bare, ENV)}
        if kustomize:
            cases["kubectl kustomize"] = (kustomize, ENV)
        for cmd, env in cases.values():  # warm the page cache and the render cache; not counted
            timed(cmd, env)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (cmd, env) in cases.items():
                samples[name].append(timed(cmd, env))
    med = {name: statistics.median(v) * 1000 for name, v in samples.items()}
    lines = [
        SECTION,
        "",
        f"Sample: `{sample.relative_to(REPO)}` ({count} objects). Median of {args.runs} interleaved runs, "
        f"whole process, cozy-render installed from a wheel into a fresh venv. Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}.",
        f"Reproduce: `.venv/bin/python bench/bench_startup.py --runs {args.runs} --write`.",
        "",
        "| command | median ms |",
        "| --- | ---: |",
    ]
    for name, ms in med.items():
        lines.append(f"| {name} | {ms:.1f} |")
    lines.append("")
    for name in ("render (full)", "render (cache hit)"):
        if "kubectl kustomize" in med:
            lines.append(f"- {name} / kubectl kustomize: **{med[name] / med['kubectl kustomize']:.2f}x** "
                         "(target <= 1.0x)")
        else:
            lines.append(f"- {name} / kubectl kustomize: not measured (kubectl not on PATH)")
        lines.append(f"- {name} / bare interpreter: **{med[name] / med['bare python']:.2f}x**")
    lines += ["", "Where a full render's start-up goes (`python -X importtime`, top-level imports, cumulative ms, "
              "one run; importtime itself inflates these):", ""]
    lines += [f"- {mod}: {ms:.1f}" for mod, ms in import_profile(sample)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
