"""`cozy-render effective` and the chart check against `helm template` alone, same machine, same run.

For the richest sample (isp-full-generic, Hubble) this times, interleaved, whole processes:

- `helm template` of the offline-safe chart copy with the cluster's layered values (the floor: what
  one real chart render costs);
- `cozy-render effective <sample> -o json` (render + one helm run + merge);
- `cozy-render check <sample>` with `--chart helm` (rules + the chart check) and `--chart model` (rules only):
  their difference is what asking the chart adds to `check`;
- `cozy-render render <sample>` (helm-free; the generated catalogue is loaded on this path).

Also, in process: loading the generated catalogue and evaluating the model once (ms).

Usage: python bench/bench_effective.py [--runs N] [--helm PATH] [--write]   (--write updates bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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
sys.path.insert(0, str(REPO))
SECTION = "## Effective platform: `effective` and the chart check vs `helm template`"
SAMPLE = REPO / "overlays" / "clusters" / "hubble-generic-01"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, env=env, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--helm", default=shutil.which("helm"))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not args.helm:
        sys.exit("no helm: pass --helm PATH (python .ci/fetch_kubectl.py DIR helm fetches one)")
    from renderer.effective.helm import offline_chart, values_files
    from renderer.platform_chart import DEFAULT_VERSION, chart_dir
    from tests.helpers import render

    cozy = str(Path(sys.executable).with_name("cozy-render"))
    result = render(SAMPLE)
    platform_obj = next(e.obj for e in result.objects if e.is_package("cozystack.cozystack-platform"))
    variant = platform_obj["spec"]["variant"]
    values = platform_obj["spec"].get("components", {}).get("platform", {}).get("values", {})
    with_helm = {**ENV, "PATH": f"{Path(args.helm).parent}{os.pathsep}{ENV.get('PATH', '')}"}
    without_helm = {**ENV, "PATH": os.pathsep.join(p for p in ENV.get("PATH", "").split(os.pathsep)
                                                   if not (Path(p) / "helm").exists())}
    with tempfile.TemporaryDirectory() as tmp, offline_chart(chart_dir(DEFAULT_VERSION)) as copy:
        user = Path(tmp) / "values.json"
        user.write_text(json.dumps(values))
        helm_cmd = [args.helm, "template", "cozystack-platform", str(copy), "-n", "cozy-system"]
        for file in values_files(copy, variant):
            helm_cmd += ["-f", str(file)]
        helm_cmd += ["-f", str(user)]
        commands = {
            "helm template (alone)": (helm_cmd, ENV),
            "cozy-render effective -o json": ([cozy, "effective", str(SAMPLE), "-o", "json"], with_helm),
            "cozy-render check (with helm)": ([cozy, "check", str(SAMPLE), "--chart", "helm", "--helm", args.helm],
                                              with_helm),
            "cozy-render check (no helm)": ([cozy, "check", str(SAMPLE), "--chart", "model"], without_helm),
            "cozy-render render": ([cozy, "render", str(SAMPLE)], without_helm),
        }
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for cmd, env in commands.values():  # warm-up
            timed(cmd, env)
        for _ in range(args.runs):
            for name, (cmd, env) in commands.items():
                samples[name].append(timed(cmd, env))
    median = {name: statistics.median(values) for name, values in samples.items()}

    import renderer.platform_chart.model as model

    model._chart_model.cache_clear()
    start = time.perf_counter()
    chart = model.chart_model(DEFAULT_VERSION)
    loaded = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    chart.evaluate(chart.effective_values(variant, values))
    evaluated = (time.perf_counter() - start) * 1000

    helm_alone = median["helm template (alone)"]
    chart_check = median["cozy-render check (with helm)"] - median["cozy-render check (no helm)"]
    version = subprocess.run([args.helm, "version", "--short"], capture_output=True, text=True).stdout.strip()
    lines = [SECTION, "",
             f"Sample `{SAMPLE.name}` (platform chart {DEFAULT_VERSION}), helm {version}, {platform.machine()}, "
             f"Python {platform.python_version()}, median of {args.runs} interleaved runs (whole processes; an "
             "editable install, so each cozy-render process carries ~18 ms of setuptools' import hook).", "",
             "| command | median ms |", "| --- | ---: |"]
    lines += [f"| {name} | {value:.1f} |" for name, value in median.items()]
    lines += ["",
              f"- effective / helm template alone: **{median['cozy-render effective -o json'] / helm_alone:.2f}x**",
              f"- the chart check adds to `check`: **{chart_check:.1f} ms** "
              f"({chart_check / helm_alone:.2f}x one helm run)",
              f"- generated catalogue on the render path: load {loaded:.1f} ms, one model evaluation "
              f"{evaluated:.1f} ms, in process (compare the render start-up section above)",
              "", "Reproduce: `python bench/bench_effective.py --write` (helm on PATH or `--helm PATH`)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
