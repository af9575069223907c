"""Shared by the process benches: the measured environment, timed runs with peak memory, profiles.

cozy-render is measured as users run it: installed from a wheel (bytecode compiled at install time)
into a fresh virtual environment. A machine with PYTHONDONTWRITEBYTECODE=1 (some dev machines set
it) would otherwise recompile every module on every run and measure the compiler, so the variable is
dropped from the environment of pip and of every measured process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# Without helm on PATH: `check` then runs the Python rules only (the chart check, one helm run per
# cluster, is measured on its own by bench_effective.py, which is given helm explicitly).
HELM = shutil.which("helm")
ENV["PATH"] = os.pathsep.join(p for p in ENV.get("PATH", "").split(os.pathsep)
                              if not os.path.exists(os.path.join(p, "helm")))


def build_venv(where: Path) -> Path:
    """A fresh venv with cozy-render installed from this checkout as a wheel (not editable); its python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, env=ENV)
    python = where / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(REPO)], check=True, env=ENV)
    return python


def has_bytecode(python: Path) -> bool:
    """Whether the installed package carries .pyc files (what a wheel install writes)."""
    out = subprocess.run([str(python), "-c", "import renderer, os; print(os.path.dirname(renderer.__file__))"],
                         capture_output=True, text=True, check=True, env=ENV, cwd="/")
    package = Path(out.stdout.strip())
    return any((package / "__pycache__").glob("entry.*.pyc"))


def cozy_render(python: Path) -> list[str]:
    return [str(python.with_name("cozy-render"))]


def bare_interpreter(python: Path) -> list[str]:
    """The venv's interpreter itself (``-I -S``: no site, no user paths), called directly, not via a shim."""
    return [str(python.resolve()), "-I", "-S", "-c", "pass"]


def kubectl() -> str | None:
    return shutil.which("kubectl")


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
        ok: tuple[int, ...] = (0,)) -> tuple[float, int]:
    """Run ``cmd`` to completion: (wall seconds, peak resident memory in bytes of that process)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or ENV, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return elapsed, usage.ru_maxrss * 1024  # Linux reports KiB


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    return run(cmd, env, cwd)[0]


_PROFILE = r"""
import cProfile, pstats, sys, os
sys.argv = ["cozy-render", *sys.argv[1:]]
from renderer.entry import main
profile = cProfile.Profile()
profile.enable()
try:
    main()
except SystemExit:
    pass
profile.disable()
stats = pstats.Stats(profile).stats
rows = []
for (file, line, name), (_cc, _nc, tottime, cumtime, _callers) in stats.items():
    rows.append((tottime, cumtime, f"{os.path.basename(os.path.dirname(file))}/{os.path.basename(file)}:{name}"))
total = max(r[1] for r in rows)
sys.stderr.write(f"TOTAL\t{total}\n")
for tottime, cumtime, where in rows:
    sys.stderr.write(f"ROW\t{tottime}\t{cumtime}\t{where}\n")
"""

# Where a render's time goes, by stage: the pipeline's entry points (cumulative time).
STAGES = [  # "<folder>/<file>:<function>", as _PROFILE names rows (tests/bench/test_proc.py checks each exists)
    ("load + merge + template (renderer.load.overlay)", "load/overlay.py:load_overlay"),
    ("variant data (renderer.load.variants)", "load/variants.py:__init__"),
    ("resolve (features)", "resolve/__init__.py:resolve"),
    ("emit (objects, labels)", "emit/__init__.py:emit"),
    ("output schemas", "schemas/__init__.py:check_objects"),
    ("rules", "rules/__init__.py:run_rules"),
    ("YAML writing", "output/yaml.py:dump_stream"),
    ("--out: guard and write files", "output/__init__.py:write_out"),
]


def profile(python: Path, args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
            top: int = 10) -> list[str]:
    """cProfile of one in-process run: the share of each pipeline stage, then the top functions by self time."""
    proc = subprocess.run([str(python), "-c", _PROFILE, *args], capture_output=True, text=True, env=env or ENV,
                          cwd=cwd)
    total = 0.0
    rows: list[tuple[float, float, str]] = []
    for line in proc.stderr.splitlines():
        parts = line.split("\t")
        if parts[0] == "TOTAL":
            total = float(parts[1])
        elif parts[0] == "ROW":
            rows.append((float(parts[1]), float(parts[2]), parts[3]))
    if not rows or not total:
        return [f"- (profile failed: {proc.stderr.strip().splitlines()[-1:]})"]
    cumulative: dict[str, float] = {}
    for _tottime, cumtime, where in rows:
        cumulative[where] = max(cumulative.get(where, 0.0), cumtime)
    lines = [f"cProfile of `cozy-render {' '.join(args)}` (one run; profiling inflates Python-heavy code), "
             f"{total:.2f} s in all:", ""]
    for label, where in STAGES:
        if where in cumulative:
            lines.append(f"- {label}: {cumulative[where]:.2f} s ({cumulative[where] / total:.0%})")
    lines += ["", "Top functions by self time:", ""]
    for tottime, _cumtime, where in sorted(rows, reverse=True)[:top]:
        lines.append(f"- {where}: {tottime:.2f} s ({tottime / total:.0%})")
    return lines
