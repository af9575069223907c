"""Sharding: a fleet split over a CI matrix (``--shard K/N``) and merged gives one run's report.

Generates a fleet (``bench/gen_fleet.py``, default 1,000 clusters; every 50th with a schema error and
every 97th refused, so error and warning paths are all in it), then for ``check --all`` (text, json,
github), ``ls`` (table, json) and ``render --all --out`` (its stderr report and the folders):

- runs the command once over the whole fleet, in each format;
- runs it in N shards (default 4) with ``-o json``, one after the other as N runners would in parallel;
- merges the N reports in each format with ``cozy-render merge``;

and compares stdout, stderr and the exit code byte for byte (and, for ``render`` of a second fleet
without errors, every file of the shards' ``--out`` folders with the one run's: a refused fleet writes
nothing in one run, while a shard whose own clusters render writes them). Prints the figures:
clusters per shard, the one run's time, the slowest shard's (what a matrix of N runners waits for)
and the merge's.

Target (issue 37): 1,000 clusters in 4 shards merged are byte-identical to one run, in every format.

Usage: python bench/bench_shard.py [--clusters 1000] [--shards 4] [--venv DIR] [--write]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proc
from gen_fleet import generate
from results import write_section

SECTION = "## Sharding: `--shard K/N` merged against one run"
# name: (arguments, formats, tree); a refused render writes nothing in one run but a shard without a
# refused cluster writes its own, so the folders are compared on a fleet without errors ("clean").
COMMANDS = {"check": (["check", "--all"], ["text", "json", "github"], "overlays"),
            "ls": (["ls"], ["table", "json"], "overlays"),
            "render": (["render", "--all"], ["text"], "overlays"),
            "render (no errors)": (["render", "--all"], ["text"], "clean")}


def run(cmd: list[str], cwd: Path) -> tuple[tuple[int, bytes, bytes], float]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, cwd=cwd, env=proc.ENV, check=False)
    return (done.returncode, done.stdout, done.stderr), time.perf_counter() - started


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def spoil(fleet: Path) -> None:
    """Errors in some clusters: an unknown key (OVL-SCHEMA) in every 50th, unparsable YAML in every 97th."""
    for i, folder in enumerate(sorted((fleet / "clusters").iterdir())):
        overlay = folder / "cluster.yaml"
        if i % 97 == 13:
            overlay.write_text(overlay.read_text() + "host: [unclosed\n")
        elif i % 50 == 7:
            overlay.write_text(overlay.read_text() + "colour: blue\n")


def measure(cozy: list[str], clusters: int, shards: int, work: Path) -> dict[str, object]:
    fleet = work / "overlays"
    generate(clusters, fleet)
    generate(clusters, work / "clean")
    spoil(fleet)
    (work / ".git").mkdir()
    figures: dict[str, object] = {"clusters": clusters, "shards": shards, "commands": {}}
    for name, (args, formats, tree) in COMMANDS.items():
        rendering = args[0] == "render"
        base = [*cozy, *args, tree]
        one_out = ["--out", f"one-{tree}"] if rendering else []
        whole, one_seconds = {}, 0.0
        for fmt in formats:
            extra = [] if rendering else ["-o", fmt]
            whole[fmt], seconds = run([*base, *one_out, *extra], work)
            one_seconds = max(one_seconds, seconds)
        shard_seconds, sizes, reports = [], [], []
        for k in range(1, shards + 1):
            shard_out = ["--out", f"many-{tree}"] if rendering else []
            done, seconds = run([*base, *shard_out, "--shard", f"{k}/{shards}", "-o", "json"], work)
            report = work / f"{args[0]}-{tree}-{k}.json"
            report.write_bytes(done[1])
            reports.append(str(report))
            shard_seconds.append(seconds)
            sizes.append(len(json.loads(done[1])["shard"]["clusters"]))
        same, merge_seconds = {}, 0.0
        for fmt in formats:
            merged, seconds = run([*cozy, "merge", *reports, "-o", fmt], work)
            merge_seconds = max(merge_seconds, seconds)
            same[fmt] = merged == whole[fmt]
        if rendering and whole[formats[0]][0] == 0:
            one = files(work / f"one-{tree}")
            same["folders"] = bool(one) and one == files(work / f"many-{tree}")
        assert sum(sizes) == clusters, sizes
        figures["commands"][name] = {  # type: ignore[index]
            "identical": same, "exit": whole[formats[0]][0], "one_run_s": round(one_seconds, 2),
            "slowest_shard_s": round(max(shard_seconds), 2), "merge_s": round(merge_seconds, 2),
            "clusters_per_shard": sizes}
    return figures


def report(figures: dict[str, object]) -> str:
    lines = [SECTION, "",
             f"{figures['clusters']} generated clusters (errors in some, warnings in others) in {figures['shards']} "
             "shards, each shard's `-o json` merged with `cozy-render merge`, compared with one run byte for "
             "byte (stdout, stderr, exit code; `render` of a fleet without errors: every file of `--out`). "
             "Shards run one after the other here; on a CI matrix they run side by side, so the matrix waits "
             "for the slowest.", "",
             "| command | identical | exit | clusters per shard | one run | slowest shard | merge |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, f in figures["commands"].items():  # type: ignore[attr-defined]
        same = ", ".join(f"{fmt} {'yes' if ok else 'NO'}" for fmt, ok in f["identical"].items())
        lines.append(f"| `{name}` | {same} | {f['exit']} | {'/'.join(map(str, f['clusters_per_shard']))} | "
                     f"{f['one_run_s']:.2f} s | {f['slowest_shard_s']:.2f} s | {f['merge_s']:.2f} s |")
    ok = all(all(f["identical"].values()) for f in figures["commands"].values())  # type: ignore[attr-defined]
    lines += ["", f"Target: merged == one run in every format: {'met' if ok else 'MISSED'}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--venv", type=Path, help="a venv with cozy-render installed (default: this interpreter's)")
    parser.add_argument("--write", action="store_true", help="replace this bench's section of bench/RESULTS.md")
    args = parser.parse_args(argv)
    python = args.venv / "bin" / "python" if args.venv else Path(sys.executable)
    cozy = proc.cozy_render(python) if python.with_name("cozy-render").exists() else [str(python), "-m", "renderer"]
    with tempfile.TemporaryDirectory(prefix="cozy-render-bench-shard-") as work:
        figures = measure(cozy, args.clusters, args.shards, Path(work))
    text = report(figures)
    sys.stdout.write(text)
    if args.write:
        write_section(SECTION, text)
    return 0 if "met." in text else 1


if __name__ == "__main__":
    sys.exit(main())
