"""Built-in output-schema validation throughput, against jsonschema on the same schemas, same run.

Every render and every `cmp generate` validates all emitted objects (Argo CD runs the renderer per
Application per refresh), so this measures what that costs:

- throughput: 10,000 rendered objects (the bundled sample clusters' output, every kind they emit:
  Packages, NetworkAttachmentDefinitions, ConfigMaps, DaemonSets, Namespaces, plus the core kinds the
  samples lack: Deployment, Service, Secret, ServiceAccount, RBAC), names varied so no two objects
  are the same; `BuiltinValidator.errors()` per object, median of N runs after one warm-up pass;
- baseline: jsonschema's Draft4Validator built once per kind (cached, as kubeconform caches its
  compiled schemas) with format checking, `is_valid()` per object, on the very same schemas;
- start-up: what importing the validators of one sample's kinds costs, from `python -X importtime`,
  with and without bytecode caches (pip writes .pyc files at install; PYTHONDONTWRITEBYTECODE=1
  setups compile the generated modules from source on every run).

Usage: python bench/bench_validate.py [--runs N] [--objects N] [--write]   (--write updates bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import Any

import targets
from results import write_section

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Validation throughput"
TARGET = 7500  # objects/s: kubeconform's published rate
sys.path.insert(0, str(REPO))

META = {"name": "x", "namespace": "ns1", "labels": {"app.kubernetes.io/name": "x"}}
POD = {"metadata": {"labels": {"app": "x"}}, "spec": {
    "serviceAccountName": "x",
    "containers": [{"name": "c", "image": "busybox:1.37", "args": ["sleep", "1"],
                    "ports": [{"containerPort": 8080, "name": "http"}],
                    "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
                    "readinessProbe": {"httpGet": {"path": "/", "port": "http"}}}],
    "tolerations": [{"operator": "Exists"}]}}
EXTRA_KINDS: list[dict[str, Any]] = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META,
     "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "template": POD}},
    {"apiVersion": "v1", "kind": "Service", "metadata": META,
     "spec": {"selector": {"app": "x"}, "ports": [{"port": 80, "targetPort": "http"}]}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": META, "stringData": {"token": "t"}},
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": META},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "x"},
     "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": META,
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"},
     "subjects": [{"kind": "ServiceAccount", "name": "x"}]},
]


def rendered_samples() -> list[tuple[str, list[dict[str, Any]]]]:
    from renderer.emit import emit
    from renderer.load.overlay import load_overlay
    from renderer.load.variants import Variants
    from renderer.resolve import resolve

    out = []
    for cluster in sorted((REPO / "overlays" / "clusters").glob("*/cluster.yaml")):
        result = emit(resolve(load_overlay(cluster.parent), Variants()))  # the stages before the checks
        out.append((cluster.parent.name, [e.obj for e in result.objects]))
    return out


def mix(size: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    base = [obj for _, objs in rendered_samples() for obj in objs] + EXTRA_KINDS
    objects, kinds = [], {}
    for i in range(size):
        obj = copy.deepcopy(base[i % len(base)])
        obj["metadata"]["name"] = f"{obj['metadata']['name']}-{i}"
        objects.append(obj)
        kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
    return objects, kinds


def timed(fn, objects: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for obj in objects:
        fn(obj)
    return time.perf_counter() - start


def baseline_validators(objects: list[dict[str, Any]], version: str):
    try:
        from jsonschema import Draft4Validator
    except ImportError:
        return None
    from renderer.check.schemas import store

    cache: dict[tuple[str, str], Any] = {}
    for obj in objects:
        key = (obj["apiVersion"], obj["kind"])
        if key not in cache:
            cache[key] = Draft4Validator(store.schema_for(*key, version), format_checker=Draft4Validator.FORMAT_CHECKER)

    def check(obj: dict[str, Any]) -> bool:
        return cache[(obj["apiVersion"], obj["kind"])].is_valid(obj)

    return check


def import_cost(sample: Path, bytecode: bool) -> float:
    """Cumulative ms of the renderer.check.schemas imports in one `render` of the sample."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if not bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        cmd = [sys.executable, "-X", "importtime", "-m", "renderer", "render", str(sample)]
        if bytecode:  # first run writes the caches into the private prefix
            subprocess.run(cmd, capture_output=True, env=env, check=True, cwd=REPO)
        err = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=REPO).stderr
    total = 0
    for line in err.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and m.group(4).startswith("renderer.check.schemas") and len(m.group(3)) <= 1:
            total += int(m.group(2))
    return total / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()

    from renderer.check.schemas.catalog import DEFAULT_KUBERNETES_VERSION
    from renderer.check.schemas.validator import BuiltinValidator

    objects, kinds = mix(args.objects)
    ours = BuiltinValidator()
    first = timed(ours.errors, objects)  # includes loading each kind's generated module once
    invalid = sum(1 for obj in objects if ours.errors(obj))
    if invalid:
        sys.exit(f"{invalid} objects of the mix are invalid; the bench measures the valid path")
    ours_runs = [timed(ours.errors, objects) for _ in range(args.runs)]
    reference = baseline_validators(objects, DEFAULT_KUBERNETES_VERSION)
    base_runs = [timed(reference, objects) for _ in range(args.runs)] if reference else []

    rate = len(objects) / statistics.median(ours_runs)
    lines = [
        SECTION,
        "",
        f"{len(objects):,} rendered objects ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), "
        f"Kubernetes schemas v{DEFAULT_KUBERNETES_VERSION}, all valid. Median of {args.runs} runs after a warm-up "
        f"pass. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}.",
        f"Reproduce: `.venv/bin/python bench/bench_validate.py --runs {args.runs} --write` (or `bench/run.py`).",
        "",
        "| validator | median s | objects/s |",
        "| --- | ---: | ---: |",
        f"| built-in (generated fastjsonschema code) | {statistics.median(ours_runs):.3f} | {rate:,.0f} |",
    ]
    if base_runs:
        base_rate = len(objects) / statistics.median(base_runs)
        lines.append(f"| jsonschema Draft4Validator, cached per kind | {statistics.median(base_runs):.3f} | "
                     f"{base_rate:,.0f} |")
    lines.append("")
    lines.append(targets.line("built-in validator throughput", rate, ">=", TARGET, " objects/s", digits=0,
                              note="the target is kubeconform's published rate"))
    if base_runs:
        lines.append(f"- built-in / jsonschema: **{rate / base_rate:.1f}x** the baseline's throughput.")
    else:
        lines.append("- jsonschema baseline: not measured (jsonschema is not installed; it is in the test extra).")
    lines.append(f"- first pass, including loading each kind's validator module: {first:.3f} s.")
    sample = REPO / "overlays" / "clusters" / "gpu-talos-01"
    if sample.is_dir():
        warm, cold = import_cost(sample, True), import_cost(sample, False)
        lines.append(f"- start-up, `python -X importtime` of `render {sample.relative_to(REPO)}` (Packages, ConfigMap, "
                     f"DaemonSet): renderer.check.schemas imports {warm:.1f} ms with .pyc files, {cold:.1f} ms without "
                     "(PYTHONDONTWRITEBYTECODE=1: the generated DaemonSet module is compiled on every run).")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
