"""Growth: every user-sized dimension of an overlay grown 10x and 100x costs at most 12x and 120x.

A quadratic loop over a list the user writes (a ``list.index`` per name, a scan of every emitted object
per Package, an exponential walk of diamond ``inherits``) hides at small sizes and takes minutes inside
the documented limits (issue 25 item 3: 97k ``enabledPackages`` took 225 s). This grows each dimension
from a base size ``n`` to ``10n`` and ``100n`` (the largest inside the limits of renderer/load/limits.py)
and times every stage a user can reach with that overlay, each size in a fresh process (medians of N runs, the base
size measured in the same run as the baseline; CPU seconds of this process, so that other work on a
shared machine does not read as growth):

- ``render``: load, merge, resolve, emit and every rule (``pipeline.run``, as ``render PATH`` runs it);
- ``cmp generate``: Argo CD's render (``cmp.render_for_argocd``: the same pipeline plus the stream);
- ``explain``: ``explain --rendered``'s entries for every object, formatted (``provenance.entries_of``);
- ``annotate``: ``render --annotate``'s comments on the stream (``provenance.annotate``);
- ``init``: finding the base for a new cluster (``commands.init.find_base``) in the same tree.

Dimensions: ``bundles.enabledPackages``, ``bundles.disabledPackages``, ``packages:``, inline
``manifests:``, layers inherited by the cluster file (fan-in), diamond layers (every layer inheriting
one shared base), and ``vars`` (each read by a template). Exits 1 when a growth exceeds its bound.

Usage: python bench/bench_growth.py [--runs N] [--only DIMENSION ...] [--write]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import targets
from results import write_section

SECTION = "## Growth: each user-sized dimension grown 10x and 100x"
BOUNDS = {10: 12.0, 100: 120.0}
# Stage times below this are noise (a dictionary lookup in init when the tree has no bases): growth is
# measured from this floor.
FLOOR_SECONDS = 0.01
HEAD = ("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"
        "host: {os: apt}\n")
BASE = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
PLATFORM = "platform:\n  variant: isp-full-generic\n"


def _bundles(key: str, n: int) -> dict[str, str]:
    names = "".join(f"      - cozystack.extra-{i}\n" for i in range(n))
    return {"clusters/c1/cluster.yaml": HEAD + PLATFORM + f"  values:\n    bundles:\n      {key}:\n" + names}


def _packages(n: int) -> dict[str, str]:
    entries = "".join(f"  cozystack.extra-{i}: {{spec: {{variant: default}}}}\n" for i in range(n))
    return {"clusters/c1/cluster.yaml": HEAD + PLATFORM + "packages:\n" + entries}


def _manifests(n: int) -> dict[str, str]:
    entries = "".join(f"  - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: m{i}, namespace: tenant-a}}, "
                      f"data: {{k: v{i}}}}}\n" for i in range(n))
    return {"clusters/c1/cluster.yaml": HEAD + PLATFORM + "manifests:\n" + entries}


def _fan_in(n: int) -> dict[str, str]:
    files = {f"base/layer-{i}.yaml": BASE + f"vars: {{k{i}: v{i}}}\n" for i in range(n)}
    inherits = ", ".join(f"../../base/layer-{i}.yaml" for i in range(n))
    files["clusters/c1/cluster.yaml"] = HEAD + PLATFORM + f"inherits: [{inherits}]\n"
    return files


def _diamond(n: int) -> dict[str, str]:
    files = {"base/root.yaml": BASE + "host: {os: apt}\n" + PLATFORM}
    files |= {f"base/mid-{i}.yaml": BASE + f"inherits: [root.yaml]\nvars: {{k{i}: v{i}}}\n" for i in range(n)}
    files |= {f"base/top-{i}.yaml": BASE + f"inherits: [mid-{i}.yaml, mid-{(i + 1) % n}.yaml]\n" for i in range(n)}
    inherits = ", ".join(f"../../base/top-{i}.yaml" for i in range(n))
    files["clusters/c1/cluster.yaml"] = HEAD + f"inherits: [{inherits}]\n"
    return files


def _vars(n: int) -> dict[str, str]:
    entries = "".join(f"  k{i}: v{i}\n" for i in range(n))
    data = "".join(f"      k{i}: '{{{{ vars.k{i} }}}}'\n" for i in range(0, n, 10))
    manifest = ("manifests:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: m, namespace: tenant-a}\n"
                "    data:\n" + data)
    return {"clusters/c1/cluster.yaml": HEAD + PLATFORM + "vars:\n" + entries + manifest}


# dimension -> (generator, base size); 100x the base stays inside renderer/load/limits.py.
DIMENSIONS: dict[str, tuple[Callable[[int], dict[str, str]], int]] = {
    "enabledPackages": (lambda n: _bundles("enabledPackages", n), 200),
    "disabledPackages": (lambda n: _bundles("disabledPackages", n), 200),
    "packages": (_packages, 40),
    "manifests": (_manifests, 30),
    "layers (fan-in)": (_fan_in, 4),
    "inherits (diamond)": (_diamond, 4),
    "vars": (_vars, 100),
}


def build(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def stages(root: Path) -> dict[str, float]:
    """Seconds per stage for the tree at ``root``, one run."""
    from renderer import cmp, output, pipeline
    from renderer.commands.explain import format_entries
    from renderer.commands.init import find_base
    from renderer.emit import provenance
    from renderer.load import layercache

    def fresh() -> None:
        layercache.clear()  # every stage parses its layers afresh, as a new process would
        provenance._layer_document.cache_clear()
        gc.collect()  # each stage starts from a collected heap: the previous stage's garbage is not its cost

    times: dict[str, float] = {}
    cluster = root / "clusters" / "c1"
    fresh()
    start = time.process_time()
    (result,) = pipeline.run(cluster, pipeline.Options(refuse=False)).results  # what `render PATH` runs
    times["render"] = time.process_time() - start
    fresh()
    start = time.process_time()
    cmp.render_for_argocd(cluster, cmp.settings("", {}, ""))
    times["cmp generate"] = time.process_time() - start
    fresh()
    start = time.process_time()
    format_entries(provenance.entries_of([result]), "text", result.overlay.name)  # explain --rendered
    times["explain"] = time.process_time() - start
    fresh()
    start = time.process_time()
    provenance.annotate(output.to_yaml(result.manifests), [result])  # render --annotate
    times["annotate"] = time.process_time() - start
    fresh()
    start = time.process_time()
    find_base(root, "apt")
    times["init"] = time.process_time() - start
    return times


def measure(name: str, runs: int, scratch: Path) -> list[tuple[str, int, int, str, float, float, bool]]:
    generate, base = DIMENSIONS[name]
    medians: dict[int, dict[str, float]] = {}
    for factor in (1, *BOUNDS):
        root = build(scratch / f"{name.split()[0]}-{factor}", generate(base * factor))
        # Each size in a fresh process, as users run it: caches and the heap of the sizes measured before
        # would otherwise be counted as this size's cost.
        child = subprocess.run([sys.executable, __file__, "--child", str(root), "--runs", str(runs)],
                               capture_output=True, text=True, check=True)
        medians[factor] = json.loads(child.stdout)
    rows = []
    for stage in medians[1]:
        for factor, bound in BOUNDS.items():
            growth = max(medians[factor][stage], FLOOR_SECONDS) / max(medians[1][stage], FLOOR_SECONDS)
            rows.append((name, base, factor, stage, medians[factor][stage], growth, growth <= bound))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=sorted(DIMENSIONS), default=None)
    parser.add_argument("--write", action="store_true", help="record the table in bench/RESULTS.md")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # one size, measured in this process
    args = parser.parse_args()
    if args.child:
        stages(args.child)  # imports and first-use caches, not measured
        samples = [stages(args.child) for _ in range(args.runs)]
        sys.stdout.write(json.dumps({stage: statistics.median(s[stage] for s in samples) for stage in samples[0]}))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="cozy-growth-") as scratch:
        for name in args.only or DIMENSIONS:
            rows += measure(name, args.runs, Path(scratch))
    lines = [SECTION, "", f"`python bench/bench_growth.py --runs {args.runs}`: median CPU seconds in this process; "
             f"growth against the base size, bound {BOUNDS[10]:g}x at 10x and {BOUNDS[100]:g}x at 100x.", "",
             "| dimension | base size | grown | stage | seconds | growth | within bound |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, base, factor, stage, seconds, growth, ok in rows:
        lines.append(f"| {name} | {base:,} | {factor}x ({base * factor:,}) | {stage} | {seconds:.3f} | "
                     f"{growth:.1f}x | {'yes' if ok else 'NO'} |")
    lines.append("")
    for factor, bound in BOUNDS.items():
        grown = [row for row in rows if row[2] == factor]
        if grown:
            name, _, _, stage, _, growth, _ = max(grown, key=lambda row: row[5])
            lines.append(targets.line(f"worst growth at {factor}x the input ({name}, {stage})", growth, "<=", bound,
                                      "x", digits=1))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.write:
        write_section(SECTION, text)
    return 0 if all(row[-1] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
