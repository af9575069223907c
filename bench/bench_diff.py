"""`cozy-render diff --snapshot` of 1,000 and 10,000 live objects with 1% drift, whole process.

For each size this builds an overlay repository whose render has that many objects (the platform
Package plus bridge NetworkAttachmentDefinitions: 100 VLANs across size/100 tenant namespaces), a
snapshot of what a synced cluster would return for them (`kubectl get -o yaml` shape: a v1 List,
with uid, resourceVersion, managedFields, status, creationTimestamp on every object) in which 1% of
the objects drifted, and times the whole `cozy-render diff PATH --snapshot FILE` process, interleaved
with the bare interpreter (`python -I -S -c pass`) as the baseline of the same run. The diff must
find exactly the drifted objects (checked on every run). Peak memory is the child's ru_maxrss.

Targets (issue 9): 10,000 objects under 3 s on this machine, linear growth (10,000 within 12x the
time of 1,000).

Usage: python bench/bench_diff.py [--runs N] [--sizes 1000,10000] [--formats json,yaml,api] [--write]
       (--write updates bench/RESULTS.md)
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import targets
from results import write_section

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SECTION = "## Diff against a snapshot"
PYTHON = Path(sys.executable)
VLANS = 100


def cozy_render_cmd() -> list[str]:
    return [str(PYTHON.with_name("cozy-render"))]


def build_repo(where: Path, size: int) -> Path:
    namespaces = max(1, size // VLANS)
    tenants = ", ".join(f"tenant-{j}" for j in range(namespaces))
    vlans = "\n".join(f"  - {{name: vlan{i}, id: {i}, uplink: eno2, bridge: br{i}, namespaces: [{tenants}]}}"
                      for i in range(1, VLANS + 1))
    cluster = where / "clusters" / "bench"
    cluster.mkdir(parents=True)
    (where / ".git").mkdir()
    (cluster / "cluster.yaml").write_text(f"""apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
metadata: {{name: bench}}
host: {{os: apt}}
platform:
  variant: isp-full-generic
  values:
    publishing: {{host: bench.example.org, apiServerEndpoint: "https://api.bench.example.org:443"}}
vlans:
{vlans}
""")
    return cluster


def live_snapshot(cluster: Path, target: Path, fmt: str) -> tuple[int, int]:
    """Write the synced cluster's dump with 1% drift; returns (objects, drifted)."""
    import yaml

    from tests.helpers import render
    from tests.kubefake import realistic

    objects = [json.loads(json.dumps(e.obj)) for e in render(cluster).objects]
    live = [realistic(o) for o in objects]
    drifted = 0
    for i, obj in enumerate(live):
        if i % 100 == 50:
            obj["spec"]["config"] = obj["spec"]["config"].replace('"ipam": {}', '"ipam": {"type": "dhcp"}')
            drifted += 1
    doc: dict[str, Any] = {"apiVersion": "v1", "items": live, "kind": "List", "metadata": {"resourceVersion": ""}}
    if fmt == "json":
        target.write_text(json.dumps(doc, indent=4))
    else:
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        target.write_text(yaml.dump(doc, Dumper=dumper, sort_keys=True))
    return len(objects), drifted


def timed(cmd: list[str], expect_changed: int | None = None) -> tuple[float, int]:
    """Wall time and peak RSS (KiB, the child's own ru_maxrss) of one process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if expect_changed is not None:
            out.seek(0)
            err.seek(0)
            assert proc.returncode == 1, (proc.returncode, err.read().decode()[-2000:])
            summary = out.read().decode().rstrip().splitlines()[-1]
            assert f"{expect_changed} to change" in summary and "0 to create" in summary, summary
    return elapsed, usage.ru_maxrss


def parse_seconds(snapshot: Path) -> float:
    """Seconds to parse a snapshot file alone, with the parser diff uses for it."""

    from renderer.diff import snapshot_yaml

    content = snapshot.read_text()
    start = time.perf_counter()
    if snapshot.suffix == ".json":
        json.loads(content)
    else:
        list(snapshot_yaml.documents(content))
    return time.perf_counter() - start


def serve(snapshot: Path, kubeconfig: Path) -> None:
    """The tests' API fake (tests/kubefake.py) holding the snapshot's objects, until stdin closes."""
    from tests.kubefake import KubeFake

    fake = KubeFake()
    fake.add(*json.loads(snapshot.read_text())["items"])
    fake.kubeconfig(kubeconfig, ["bench"])
    print("ready", flush=True)
    sys.stdin.read()
    fake.stop()


def child(*args: str) -> str:
    # Helpers run in child processes: a parent holding 10,000 objects would inflate every later
    # child's ru_maxrss (the forked copy counts until exec).
    return subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True).stdout


def main() -> None:
    if sys.argv[1:2] == ["--generate"]:
        cluster, snapshot, fmt = sys.argv[2:5]
        print(*live_snapshot(Path(cluster), Path(snapshot), fmt))
        return
    if sys.argv[1:2] == ["--parse"]:
        print(parse_seconds(Path(sys.argv[2])))
        return
    if sys.argv[1:2] == ["--serve"]:
        serve(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--formats", default="json,yaml,api",
                        help="live state, comma-separated: json or yaml snapshots, or api (the API fake)")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    formats = args.formats.split(",")
    bare = [str(PYTHON), "-I", "-S", "-c", "pass"]
    rows = []
    load_before = os.getloadavg()[0]
    servers: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        for size in sizes:
            cluster = build_repo(Path(tmp) / f"r{size}", size)
            for fmt in formats:
                file_format = "json" if fmt == "api" else fmt
                snapshot = Path(tmp) / f"live-{size}-{fmt}.{file_format}"
                count, drifted = map(int, child("--generate", str(cluster), str(snapshot), file_format).split())
                source = ["--snapshot", str(snapshot)]
                if fmt == "api":
                    kubeconfig = Path(tmp) / f"kubeconfig-{size}"
                    server = subprocess.Popen([sys.executable, __file__, "--serve", str(snapshot), str(kubeconfig)],
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                    servers.append(server)
                    assert server.stdout is not None and server.stdout.readline().strip() == "ready"
                    source = ["--kubeconfig", str(kubeconfig)]
                cmd = [*cozy_render_cmd(), "diff", str(cluster), *source, "--color", "never"]
                cases.append(((fmt, size), count, drifted, cmd, snapshot.stat().st_size))
        try:
            for _, _, drifted, cmd, _ in cases:  # warm-up, not counted
                timed(cmd, drifted)
            times: dict[tuple[str, int], list[float]] = {case: [] for case, *_ in cases}
            peaks: dict[tuple[str, int], int] = {}
            bare_times = []
            for _ in range(args.runs):
                bare_times.append(timed(bare)[0])
                for case, _, drifted, cmd, _ in cases:
                    elapsed, rss = timed(cmd, drifted)
                    times[case].append(elapsed)
                    peaks[case] = max(peaks.get(case, 0), rss)
        finally:
            for server in servers:
                assert server.stdin is not None
                server.stdin.close()
                server.wait(timeout=30)
        parse = {fmt: statistics.median(float(child("--parse", str(Path(tmp) / f"live-{sizes[-1]}-{fmt}.{fmt}")))
                                        for _ in range(3)) for fmt in formats if fmt != "api"}
        base = statistics.median(bare_times)
        for case, count, drifted, _, nbytes in cases:
            med = statistics.median(times[case])
            rows.append((case[0], count, drifted, nbytes, med, peaks[case], med / base))
    lines = [
        SECTION,
        "",
        "`cozy-render diff PATH --snapshot FILE`: the snapshot is a `kubectl get -o json|yaml` List with "
        "server-owned fields on every object (uid, resourceVersion, managedFields, status); `api` is "
        "`diff PATH --kubeconfig FILE` against the same objects served over loopback HTTP by the tests' API fake "
        "(tests/kubefake.py, in its own process), through the kubernetes client. 1% of the objects "
        f"drifted, whole process, median of {args.runs} interleaved runs after a warm-up, editable install in the "
        f"dev venv. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}.",
        f"Reproduce: `.venv/bin/python bench/bench_diff.py --runs {args.runs} --write`.",
        "",
        "| live state | live objects | MiB | drifted | median s | peak RSS MiB | / bare interpreter |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for fmt, count, drifted, nbytes, med, peak, ratio in rows:
        lines.append(f"| {fmt} | {count:,} | {nbytes / 2**20:.1f} | {drifted} | {med:.3f} | {peak / 1024:.0f} | "
                     f"{ratio:.0f}x |")
    lines += ["", f"- bare interpreter (`python -I -S -c pass`): {base * 1000:.1f} ms; 1-minute load average "
              f"{load_before:.1f} before and {os.getloadavg()[0]:.1f} after the run (other work on the machine "
              "slows every row; compare ratios from one run)"]
    for fmt in formats:
        mine = [r for r in rows if r[0] == fmt]
        small, big = mine[0], mine[-1]
        if len(mine) >= 2:
            lines.append(targets.line(f"{fmt}: {big[1]:,} / {small[1]:,} objects, time", big[4] / small[4], "<=", 12,
                                      "x", digits=1))
        lines.append(targets.line(f"{fmt}: {big[1]:,} objects", big[4], "<", 3, " s"))
    for fmt, seconds in parse.items():
        parser_name = "json.loads" if fmt == "json" else "libyaml events, renderer/diff/snapshot_yaml.py"
        lines.append(f"- parsing the {sizes[-1]:,}-object {fmt} snapshot alone ({parser_name}, median of 3): "
                     f"{seconds:.2f} s")
    lines.append("- Objects are compared with `==` after normalisation; the changed paths of `-o json` are "
                 "walked only on the objects that differ, so what is left is rendering and reading the live "
                 "state. A YAML snapshot is built straight from libyaml's parser events (PyYAML's own constructor "
                 "took ten times as long). "
                 "`api` includes importing the kubernetes client's loader and discovery plus a labelled list of every "
                 "kind the fake serves, and the fake shares the CPUs with the diff.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
