"""Run every bench and write bench/RESULTS.md: `python bench/run.py` (about 25 minutes on a fresh clone).

Builds one fresh virtual environment with cozy-render installed from this checkout as a wheel (bytecode
compiled at install, PYTHONDONTWRITEBYTECODE dropped: ``bench/proc.py``), then runs, in order:

1. ``bench_startup.py``: cold `render PATH` and `cmp generate` of the richest sample, cache miss and
   hit, against `kubectl kustomize` of the same objects and the bare interpreter (median of 15);
2. ``bench_fleet.py``: `render --all --out` and `check --all` of generated 100- and 1,000-cluster
   fleets against `kubectl kustomize` once per cluster (median of 5), growth and peak memory;
3. ``bench_validate.py``: output-schema validation throughput against jsonschema (in this process's
   interpreter, which needs the test extra for the jsonschema baseline; median of 10);
4. ``bench_diff.py``: `diff --snapshot` of 1,000 and 10,000 objects against the bare interpreter (in
   this process's interpreter too: it needs the diff extras);
5. ``bench_diff_live.py``: live `diff` and `diff --server-side` of gpu-apt-01 side by side with
   `kubectl diff --server-side` on the tests' API fake, request counts, the `--timeout` overshoot;
6. ``bench_effective.py``: `effective` and `check` with helm against `helm template` alone (needs helm:
   PATH or ``.ci/bin``);
7. ``bench_chart_peer.py``: `check --all --chart helm` and `effective --all` of a generated 1,000-cluster fleet
   against its peer, a shell loop of `helm template` over the same values, and helm's own CPU floor (needs
   helm);
8. ``bench_chart_fleet.py``: `check --all --chart helm` of a generated fleet against `--chart model` (the
   model-vs-chart figure);
9. ``bench_preview.py``: `diff --base --head` of a 1,000-cluster fleet repository (one base file, one
   cluster, a README edit) against `render --all` twice (in this process's interpreter);
10. ``bench_growth.py``: every user-sized overlay dimension grown 10x and 100x, per stage (CPU time);
11. ``bench_doctor.py``: `doctor` of a GPU cluster against the tests' API fake;
12. ``bench_sidecar.py``: concurrent `cmp generate` processes sharing one render cache, as the Argo CD
    cmp-server starts them (100 Applications here; the script's own default is 200);
13. ``bench_daemon.py``: `cmp generate` on a cache miss through the resident renderer (`daemon serve`) against
    in-process and `kubectl kustomize`, and the sidecar's throughput through it.

RESULTS.md is rewritten whole: a header with the machine, the time, the commit and the command, then
"Targets", every target any bench states (``targets.line``) next to its figure with misses marked
**MISSED**, then one section per bench (each script can also replace just its own section with
``--write``). Timings on a shared machine are noisy: compare ratios from one run.

Usage: python bench/run.py [--quick | --summary]   (--quick: fewer runs and a 300-cluster fleet, for a smoke test;
its figures are not written; the summary of targets is still printed; --summary: rebuild the Targets
section from RESULTS.md after one bench rewrote its own section)
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_fleet
import bench_startup
import proc
import targets
from results import RESULTS

BENCH = Path(__file__).resolve().parent


def machine() -> str:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    kubectl = proc.kubectl()
    version = ""
    if kubectl:
        done = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True)
        version = " ".join(done.stdout.split()) or "unknown version"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()}, {os.cpu_count()} CPUs{f' ({cpu})' if cpu else ''}, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}; kubectl: "
            f"{f'{kubectl} ({version})' if kubectl else 'not on PATH (kustomize baselines skipped)'}; "
            f"load average at start {load:.1f}")


def commit() -> str:
    done = subprocess.run(["git", "-C", str(proc.REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(proc.REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return (done.stdout.strip() or "unknown") + (" (with uncommitted changes)" if dirty else "")


def _title(section: str) -> str:
    """A section's heading without its ``## `` (the bench's name in the summary)."""
    first = section.lstrip().splitlines()[0] if section.strip() else ""
    return first.removeprefix("## ").split(":")[0].strip() or "?"


def resummarise(results: str) -> str:
    """RESULTS.md with its Targets section made anew from the bench sections that follow it."""
    import re

    parts = re.split(r"(?m)^(?=## )", results)
    head, sections = parts[0], [p for p in parts[1:] if not p.startswith("## Targets")]
    summary = targets.summary([(_title(part), part) for part in sections])
    return "\n".join(part.rstrip() + "\n" for part in (head, summary, *sections))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smoke test: fewer runs, nothing written")
    parser.add_argument("--summary", action="store_true",
                        help="measure nothing: rebuild the Targets section from RESULTS.md's sections (after a "
                             "bench rewrote its own section with --write)")
    args = parser.parse_args()
    if args.summary:
        RESULTS.write_text(resummarise(RESULTS.read_text()))
        print(f"rewrote the Targets section of {RESULTS}")
        return
    started = time.time()
    with tempfile.TemporaryDirectory() as scratch:
        python = proc.build_venv(Path(scratch) / "venv")
        if not proc.has_bytecode(python):
            sys.exit("the benchmark venv has no .pyc files; refusing to measure the compiler")
        startup = bench_startup.run(python, argparse.Namespace(runs=5 if args.quick else 15, compare=None))
        print(startup, flush=True)
        fleet_args = argparse.Namespace(runs=2 if args.quick else 5, sizes=[100, 300] if args.quick else [100, 1000])
        fleet = bench_fleet.run(python, fleet_args, Path(scratch))
        print(fleet, flush=True)
        in_process: list[str] = []
        # These two run in this interpreter (the project venv): bench_validate needs jsonschema (the test
        # extra) for its baseline, bench_diff the diff extras; both say so in their sections.
        diff_options = ["--runs", "2", "--sizes", "1000"] if args.quick else ["--runs", "5"]
        # bench_effective needs helm (PATH, or .ci/bin where .ci/run puts it); it says so when absent.
        effective_options = ["--runs", "5" if args.quick else "15", *(["--helm", proc.HELM] if proc.HELM else [])]
        preview_options = ["--runs", "1", "--size", "300"] if args.quick else ["--runs", "3"]
        for script, options in (("bench_validate.py", ["--runs", "3" if args.quick else "10"]),
                                ("bench_diff.py", diff_options),
                                ("bench_diff_live.py", ["--runs", "2" if args.quick else "5"]),
                                ("bench_effective.py", effective_options),
                                ("bench_chart_peer.py", ["--python", str(python), "--runs", "1" if args.quick else "3",
                                                         *(["--clusters", "100"] if args.quick else []),
                                                         *(["--helm", proc.HELM] if proc.HELM else [])]),
                                ("bench_chart_fleet.py", ["--runs", "1" if args.quick else "3",
                                                          *(["--sizes", "100"] if args.quick else []),
                                                          *(["--helm", proc.HELM] if proc.HELM else [])]),
                                ("bench_preview.py", preview_options),
                                ("bench_growth.py", ["--runs", "1" if args.quick else "3"]),
                                ("bench_doctor.py", ["--runs", "2" if args.quick else "7"]),
                                ("bench_sidecar.py", ["--python", str(python), "--apps", "30" if args.quick else "100",
                                                      "--concurrency", "2", "8", "32"]),
                                ("bench_daemon.py", ["--venv", str(python.parent.parent),
                                                     "--runs", "5" if args.quick else "15",
                                                     "--apps", "30" if args.quick else "100"])):
            done = subprocess.run([sys.executable, str(BENCH / script), *options], capture_output=True, text=True,
                                  env=proc.ENV)
            # A bench that measured and found a miss exits 1 with its section written: keep the section.
            text = done.stdout[done.stdout.find("## "):] if "## " in done.stdout else ""
            if not text:
                text = f"## {script}\n\nFailed (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}\n"
            print(text, flush=True)
            in_process.append(text)
    elapsed = time.time() - started
    sections = [(_title(part), part) for part in (startup, fleet, *in_process)]
    summary = targets.summary(sections)
    print(summary, flush=True)
    if args.quick:
        print(f"quick run: {elapsed:.0f} s; nothing written")
        return
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    header = (
        "# Benchmark results\n\n"
        f"Written by `{Path(sys.executable).name} bench/run.py` on {when} "
        f"at commit {commit()}, in {elapsed / 60:.1f} minutes.\n\n"
        f"Machine: {machine()}.\n\n"
        "Each bench is a whole process per command unless it says otherwise, cozy-render installed from a "
        "wheel with bytecode into a fresh venv, and every ratio compares figures measured in this same run. "
        "On a shared machine the absolute figures move by tens of percent between runs; the ratios move less.\n"
    )
    # Rewritten whole, so a section no bench writes any more does not linger.
    RESULTS.write_text("\n".join(part.rstrip() + "\n" for part in (header, summary, startup, fleet, *in_process)))
    print(f"wrote {RESULTS} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
