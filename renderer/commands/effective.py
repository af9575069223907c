"""Command bodies: ``cozy-render effective PATH`` and ``cozy-render platforms``.

``run(request)`` is one ``pipeline.run`` (the cluster rendered and checked, refused as ``render``
refuses it) with a projection that turns each cluster's render into its effective Package set
(``renderer.effective.packages``): the platform chart's Packages as the chosen judge says them
(``--chart``: the built-in model by default, the real chart through helm with ``--chart helm``), with
cozy-render's own on top. With ``--all`` it goes on past a failing cluster, as a loop would.
"""

from __future__ import annotations

import functools
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from renderer import report
from renderer.effective.chart_check import chart_render, model_render
from renderer.effective.choice import choose
from renderer.effective.packages import cluster_chart, effective_set
from renderer.errors import EXIT_OK, fail
from renderer.output.yaml import dump_one
from renderer.pipeline import Options, jobs_for
from renderer.pipeline import run as run_pipeline
from renderer.platform_chart import CHARTS, DEFAULT_VERSION, shipped_versions
from renderer.report import JSON_API_VERSION as API_VERSION
from renderer.requests import EffectiveRequest

if TYPE_CHECKING:
    from renderer.effective.choice import ChartChoice
    from renderer.effective.packages import EffectiveSet


def run(req: EffectiveRequest) -> int:
    """One cluster, or with ``--all`` every cluster of the tree: what a loop running ``effective
    CLUSTER`` over them prints (each cluster's output on stdout in cluster order, its warnings and
    refusal lines on stderr), with the worst exit code, except that ``-o json`` is one
    ``EffectiveList`` document holding each rendered cluster's ``Effective`` document. With the real
    chart, the platform charts of a fleet are rendered many clusters to a helm process (the check
    stage's batch), which tests/effective prove equal to one helm run per cluster."""
    chart = choose(req.chart, req.helm)
    if req.platform_chart is not None and not (req.platform_chart / "Chart.yaml").is_file():
        raise fail("PLT-VERSION", f"--platform-chart {req.platform_chart}: no Chart.yaml "
                   "(a copy of packages/core/platform/)")
    options = Options(req.variants, req.root, chart=chart, platform_chart=req.platform_chart,
                      jobs=jobs_for(req.jobs))
    outputs: list[str] = []

    def show(cluster: Any) -> None:  # each cluster as it is done, in cluster order
        report.write(cluster.findings, stream=sys.stderr)
        if cluster.kept is not None:
            outputs.append(cluster.kept)

    done = run_pipeline(req.path, options, all_clusters=req.all_clusters, observer=show,
                        keep=functools.partial(_output, req.fmt, chart, req.platform_chart))
    report.show("effective-run", req.fmt, EffectiveOutputs(outputs, req.all_clusters))
    return done.exit_code


class EffectiveOutputs:
    """Each rendered cluster's output text (``effective CLUSTER``'s stdout), in cluster order."""

    def __init__(self, texts: list[str], listed: bool) -> None:
        self.texts = texts
        self.listed = listed  # --all: -o json is one EffectiveList


EFFECTIVE_KIND, EFFECTIVE_LIST_KIND = "Effective", "EffectiveList"


def json_list(documents: list[str]) -> str:
    """The ``EffectiveList`` of ``--all -o json``: each cluster's ``Effective`` document (the text
    ``effective CLUSTER -o json`` prints) one level in, byte for byte what ``json.dumps(indent=2)``
    writes for the whole. The texts are composed, not parsed again: a cluster's document is about
    41 KB, and JSON text holds no raw line break inside a string, so indenting each line is exact."""
    head = f'{{\n  "apiVersion": "{API_VERSION}",\n  "kind": "{EFFECTIVE_LIST_KIND}",\n  "clusters": '
    if not documents:
        return head + "[]\n}\n"
    items = ",\n".join("    " + text.rstrip("\n").replace("\n", "\n    ") for text in documents)
    return head + "[\n" + items + "\n  ]\n}\n"


@report.reporter("effective-run", "json")
def _run_json(outputs: EffectiveOutputs, streams: report.Streams) -> None:
    streams.stdout.write(json_list(outputs.texts) if outputs.listed else "".join(outputs.texts))


@report.reporter("effective-run", "yaml")
@report.reporter("effective-run", "table")
def _run_text(outputs: EffectiveOutputs, streams: report.Streams) -> None:
    streams.stdout.write("".join(outputs.texts))


def _output(fmt: str, chart: ChartChoice, platform_chart: Path | None, result: Any) -> str:
    """The projection ``pipeline.run`` keeps of a cluster: what ``effective CLUSTER`` prints on stdout
    (computed where the cluster was rendered, in a worker with ``--jobs``)."""
    version, folder = cluster_chart(result, platform_chart)
    rendered = chart_render(result, chart.helm, folder) if chart.helm is not None else model_render(result)
    found = effective_set(result, "", folder, version, rendered=rendered, judge=chart.judge())
    out = io.StringIO()
    report.show("effective", fmt, EffectiveView(result.overlay.name, found, chart), report.Streams(out, sys.stderr))
    return out.getvalue()


class EffectiveView:
    """One cluster's effective set, and who judged the platform chart."""

    def __init__(self, cluster: str, found: EffectiveSet, chart: ChartChoice) -> None:
        self.cluster, self.found, self.chart = cluster, found, chart


@report.reporter("effective", "json")
def _json(view: EffectiveView, streams: report.Streams) -> None:
    """One cluster's ``Effective`` document (``cozy-render schema output effective``)."""
    found = view.found
    streams.stdout.write(json.dumps({"apiVersion": API_VERSION, "kind": EFFECTIVE_KIND, "cluster": view.cluster,
                                     "platformVersion": found.version, "chart": view.chart.as_dict(),
                                     "assumedAbsent": list(found.assumed_absent),
                                     "packageSources": found.package_sources,
                                     "packages": [p.as_dict() for p in found.packages]}, indent=2) + "\n")


def _header(found: EffectiveSet) -> list[str]:
    header = [f"# platform chart {found.version}: {len(found.packages)} Packages, "
              f"{found.package_sources} PackageSources ({found.judge})", "# assumed absent offline:"]
    return header + [f"#   - {item}" for item in found.assumed_absent]


@report.reporter("effective", "table")
def _table(view: EffectiveView, streams: report.Streams) -> None:
    found = view.found
    rows = [("NAME", "VARIANT", "ORIGIN", "COMPONENTS")]
    rows += [(p.name, p.variant, p.origin, ",".join(p.components) or "-") for p in found.packages]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)).rstrip()
             for row in rows]
    streams.stdout.write("\n".join(lines + _header(found)) + "\n")


@report.reporter("effective", "yaml")
def _yaml(view: EffectiveView, streams: report.Streams) -> None:
    found = view.found
    docs = [f"# origin: {p.origin}\n{dump_one(p.obj)}" for p in found.packages]
    streams.stdout.write("\n".join(_header(found)) + "\n---\n" + "---\n".join(docs))


def platforms() -> int:
    """List the vendored platform chart versions, their upstream commit, and the default."""
    records = json.loads((CHARTS / "vendored.json").read_text(encoding="utf-8"))
    for version in shipped_versions():
        record = records.get(version, {})
        default = "  (default)" if version == DEFAULT_VERSION else ""
        sys.stdout.write(f"{version:14} {record.get('ref', '?')} {record.get('commit', '?')[:12]} "
                         f"{record.get('date', '?')}{default}\n")
    return EXIT_OK
