"""Command bodies: ``cozy-render effective PATH`` and ``cozy-render platforms``.

``run(request)`` renders the cluster (refusing on errors, as ``render`` does), renders the platform
chart of the cluster's ``platform.version`` (or ``--platform-chart DIR``) with a real helm, and
prints the effective Package set (``renderer.effective.packages``). No helm: one PLT-HELM line
saying how to get one, exit 3.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from renderer import report
from renderer.errors import EXIT_OK, fail
from renderer.requests import EffectiveRequest

if TYPE_CHECKING:
    from renderer.effective.packages import EffectiveSet


def run(req: EffectiveRequest) -> int:
    from renderer.effective.helm import require_helm
    from renderer.effective.packages import cluster_chart, effective_set
    from renderer.errors import ERROR, RenderError
    from renderer.pipeline import render

    helm = require_helm(req.helm)
    if req.platform_chart is not None and not (req.platform_chart / "Chart.yaml").is_file():
        raise fail("PLT-VERSION", f"--platform-chart {req.platform_chart}: no Chart.yaml "
                   "(a copy of packages/core/platform/)")
    result = render(req.path, variants=req.variants, root=req.root, refuse=False)
    # Refuse as render does, except that --platform-chart answers an unknown platform.version.
    errors = [f for f in result.findings if f.severity == ERROR and
              not (f.code == "PLT-VERSION" and req.platform_chart is not None)]
    if errors:
        raise RenderError(result.findings)
    for warning in result.findings:
        sys.stderr.write(warning.format() + "\n")
    version, chart = cluster_chart(result, req.platform_chart)
    found = effective_set(result, helm, chart, version)
    report.show("effective", req.fmt, found)
    return EXIT_OK


@report.reporter("effective", "json")
def _json(found: EffectiveSet, streams: report.Streams) -> None:
    streams.stdout.write(json.dumps({"platformVersion": found.version, "assumedAbsent": list(found.assumed_absent),
                                     "packageSources": found.package_sources,
                                     "packages": [p.as_dict() for p in found.packages]}, indent=2) + "\n")


def _header(found: EffectiveSet) -> list[str]:
    header = [f"# platform chart {found.version}: {len(found.packages)} Packages, "
              f"{found.package_sources} PackageSources", "# assumed absent offline:"]
    return header + [f"#   - {item}" for item in found.assumed_absent]


@report.reporter("effective", "table")
def _table(found: EffectiveSet, streams: report.Streams) -> None:
    rows = [("NAME", "VARIANT", "ORIGIN", "COMPONENTS")]
    rows += [(p.name, p.variant, p.origin, ",".join(p.components) or "-") for p in found.packages]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)).rstrip()
             for row in rows]
    streams.stdout.write("\n".join(lines + _header(found)) + "\n")


@report.reporter("effective", "yaml")
def _yaml(found: EffectiveSet, streams: report.Streams) -> None:
    from renderer.output.yaml import dump_one

    docs = [f"# origin: {p.origin}\n{dump_one(p.obj)}" for p in found.packages]
    streams.stdout.write("\n".join(_header(found)) + "\n---\n" + "---\n".join(docs))


def platforms() -> int:
    """List the vendored platform chart versions, their upstream commit, and the default."""
    from renderer.platform_chart import CHARTS, DEFAULT_VERSION, shipped_versions

    records = json.loads((CHARTS / "vendored.json").read_text(encoding="utf-8"))
    for version in shipped_versions():
        record = records.get(version, {})
        default = "  (default)" if version == DEFAULT_VERSION else ""
        sys.stdout.write(f"{version:14} {record.get('ref', '?')} {record.get('commit', '?')[:12]} "
                         f"{record.get('date', '?')}{default}\n")
    return EXIT_OK
