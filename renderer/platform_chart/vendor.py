"""Vendor the platform chart of another Cozystack version from a local checkout.

    python -m renderer.platform_chart.vendor /path/to/cozystack NAME [--repo-root DIR]

Copies ``packages/core/platform/{Chart.yaml,values*.yaml,templates,sources,files}`` into
``renderer/platform_chart/charts/NAME/`` and the chart's helm-unittest suites into
``tests/platform_chart/suites/NAME/``, records the checkout's commit in ``charts/vendored.json``,
and regenerates every artefact that follows from the charts (``python -m renderer.generate``: the
catalogue and model of each version, the README's supported-versions table, the rules page). A
release ``vX.Y.Z`` newer than every vendored one becomes the default (``DEFAULT_VERSION`` is the
latest release folder). Then ``pytest tests/platform_chart`` runs model-vs-helm and the chart's own
helm-unittest suites for every vendored version. A maintainer tool: nothing at run time calls it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from renderer.generated_files import refusal
from renderer.platform_chart import CHARTS

CHART_PATH = Path("packages/core/platform")
COPIED = ("Chart.yaml", "templates", "sources", "files")


def vendor(checkout: Path, name: str, repo_root: Path, charts: Path = CHARTS) -> Path:
    source = checkout / CHART_PATH
    if not (source / "Chart.yaml").is_file():
        raise SystemExit(f"{source}: no Chart.yaml (is {checkout} a cozystack/cozystack checkout?)")
    target = charts / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for item in [*COPIED, *(p.name for p in sorted(source.glob("values*.yaml")))]:
        path = source / item
        if path.is_dir():
            shutil.copytree(path, target / item)
        elif path.is_file():
            shutil.copy2(path, target / item)
    suites = repo_root / "tests" / "platform_chart" / "suites" / name
    if suites.exists():
        shutil.rmtree(suites)
    suites.mkdir(parents=True)
    for test in sorted((source / "tests").glob("*.yaml")):
        shutil.copy2(test, suites / test.name)
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip()
    date = subprocess.run(["git", "-C", str(checkout), "show", "-s", "--format=%cs", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()
    record_file = charts / "vendored.json"
    records = json.loads(record_file.read_text(encoding="utf-8")) if record_file.is_file() else {}
    records[name] = {"repository": "https://github.com/cozystack/cozystack", "path": str(CHART_PATH),
                     "ref": name, "commit": commit or "unknown", "date": date or "unknown",
                     "license": "Apache-2.0"}
    record_file.write_text(json.dumps(records, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a cozystack/cozystack checkout at the wanted ref")
    parser.add_argument("name", help="folder name under charts/ (the platform.version users will write)")
    parser.add_argument("--repo-root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="cozy-render repository root (for tests/platform_chart/suites)")
    parser.add_argument("--no-generate", action="store_true", help="copy only; skip python -m renderer.generate")
    args = parser.parse_args(argv)

    refused = refusal("python -m renderer.platform_chart.vendor")
    if refused:  # it writes into renderer/platform_chart/charts: never into an installed package
        print(refused, file=sys.stderr)
        return 2
    target = vendor(args.checkout, args.name, args.repo_root)
    print(f"vendored {target}")
    if args.no_generate:
        return 0
    import subprocess

    # A fresh interpreter: DEFAULT_VERSION and the shipped versions are read from charts/ at import.
    done = subprocess.run([sys.executable, "-m", "renderer.generate"], cwd=args.repo_root, check=False)
    if done.returncode == 0:
        print("regenerated; now run: python -m pytest tests/platform_chart")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
