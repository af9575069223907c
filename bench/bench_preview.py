"""`cozy-render diff --base --head` of a 1,000-cluster fleet repository, whole process (issue 21 item 5).

Builds a Git repository holding a generated fleet (``bench/gen_fleet.py``: every sample shape, in
``overlays/``) and three changes on top of it, each its own commit:

- ``base-edit``: one line of ``overlays/base/cluster.yaml``, which every cluster inherits (directly or
  through ``base/talos.yaml``): every cluster is affected and must render once per side;
- ``one-cluster``: one cluster's own ``cluster.yaml``: one render per side, the rest decided by
  ``renderer.inputs.cluster_inputs`` at the base;
- ``docs-only``: a README edit: no cluster renders at all.

Each is timed as the whole ``cozy-render diff --base REV --head REV --all overlays -o json`` process
(without helm on PATH: the platform's reaction is the built-in model's; ``bench_effective.py`` prices
helm), median of N interleaved rounds, against two baselines measured in the same rounds: the bare
interpreter (``python -I -S -c pass``) and ``cozy-render render --all overlays`` run twice (what
rendering every cluster of both revisions costs without any selection). Every run's JSON is checked:
the renders per side must be exactly the affected clusters.

Usage: python bench/bench_preview.py [--runs N] [--size 1000] [--write]   (--write updates bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proc
from gen_fleet import generate
from results import write_section

SECTION = "## Review a change: `diff --base --head` of a fleet"
PYTHON = Path(sys.executable)
GIT_ENV = {**proc.ENV, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.org",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.org",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=GIT_ENV).stdout


def commit(repo: Path, message: str, tag: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    git(repo, "tag", tag)


def build(repo: Path, size: int) -> tuple[list[str], str]:
    """The repository and its commits; returns (cluster names, the one cluster edited)."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    names = generate(size, repo / "overlays")
    (repo / "README.md").write_text("# fleet\n")
    commit(repo, "fleet", "start")
    base = repo / "overlays" / "base" / "cluster.yaml"
    text = base.read_text()
    assert "exposedServices: [dashboard, api]" in text
    base.write_text(text.replace("[dashboard, api]", "[dashboard, api, vm-exportproxy]"))
    commit(repo, "one base file", "base-edit")
    one = names[len(names) // 2]
    path = repo / "overlays" / "clusters" / one / "cluster.yaml"
    text = path.read_text()
    assert f"domain: {one}.example.org" in text
    path.write_text(text.replace(f"domain: {one}.example.org", f"domain: {one}.example.net"))
    commit(repo, "one cluster", "one-cluster")
    (repo / "README.md").write_text("# fleet\n\nDocs only.\n")
    commit(repo, "docs only", "docs-only")
    return names, one


def preview(repo: Path, base: str, head: str) -> list[str]:
    return [str(PYTHON.with_name("cozy-render")), "diff", "--base", base, "--head", head, "--all",
            str(repo / "overlays"), "-o", "json", "--exit-zero"]


def checked(cmd: list[str], repo: Path, want: dict[str, int]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=proc.ENV, cwd=repo, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-2000:]}")
    summary = json.loads(done.stdout)["summary"]
    assert summary["rendered"] == want, (cmd, summary)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cozy-render-bench-preview-") as tmp:
        repo = Path(tmp) / "fleet"
        names, one = build(repo, args.size)
        cases = [("one base file (every cluster)", "start", "base-edit", {"base": len(names), "head": len(names)}),
                 (f"one cluster's file ({one})", "base-edit", "one-cluster", {"base": 1, "head": 1}),
                 ("README only", "one-cluster", "docs-only", {"base": 0, "head": 0})]
        render_all = [str(PYTHON.with_name("cozy-render")), "render", "--all", str(repo / "overlays")]
        bare = proc.bare_interpreter(PYTHON)
        times: dict[str, list[float]] = {c[0]: [] for c in cases}
        render_times: list[float] = []
        bare_times: list[float] = []
        checked(preview(repo, "start", "base-edit"), repo, cases[0][3])  # warm the page cache
        for _ in range(args.runs):
            for label, base, head, want in cases:
                times[label].append(checked(preview(repo, base, head), repo, want))
            render_times.append(proc.timed(render_all, cwd=repo))
            bare_times.append(proc.timed(bare))
    two_renders = 2 * statistics.median(render_times)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [SECTION, "",
             f"`python bench/bench_preview.py --runs {args.runs} --size {args.size}` on {platform.machine()}, "
             f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average {load:.1f} at the end; "
             f"median of {args.runs} interleaved rounds, "
             "whole process, without helm on PATH (the platform's reaction from the built-in model). Baselines "
             "from the same rounds: `render --all` of the fleet, twice (both revisions, everything rendered), and "
             "the bare interpreter.", "",
             f"| change ({args.size} clusters) | renders base / head | median s | vs 2x `render --all` |",
             "| --- | --- | --- | --- |"]
    for label, _base, _head, want in cases:
        median = statistics.median(times[label])
        lines.append(f"| {label} | {want['base']} / {want['head']} | {median:.2f} | {median / two_renders:.2f}x |")
    lines += ["", f"2x `render --all`: {two_renders:.2f} s; bare interpreter: {statistics.median(bare_times):.3f} s. "
              "Every cluster reached renders once per side in one process; the others cost one "
              "`cluster_inputs` look-up at the base, and none when no file changed.", ""]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
