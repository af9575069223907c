"""Command bodies: ``cozy-render effective PATH`` and ``cozy-render platforms``.

``run(request)`` renders the cluster (refusing on errors, as ``render`` does), renders the platform
chart of the cluster's ``platform.version`` (or ``--platform-chart DIR``) with a real helm, and
prints the effective Package set (``renderer.effective.packages``). No helm: one PLT-HELM line
saying how to get one, exit 3.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from renderer import report
from renderer.errors import ERROR, EXIT_OK, Finding, Location, RenderError, fail
from renderer.report import JSON_API_VERSION as API_VERSION
from renderer.requests import EffectiveRequest

if TYPE_CHECKING:
    from renderer.effective.packages import EffectiveSet


def run(req: EffectiveRequest) -> int:
    """One cluster, or with ``--all`` every cluster of the tree: exactly what a loop running
    ``effective CLUSTER`` over them prints (each cluster's output on stdout in cluster order, its
    warnings and refusal lines on stderr), with the worst exit code, except that ``-o json`` is one
    ``EffectiveList`` document holding each cluster's ``Effective`` document (issue 31: one document
    a ``json.load`` reads, as every other ``--all -o json``); the platform charts are rendered
    many clusters to a helm process (``render_platform_many``), which tests/effective prove equal to
    one helm run per cluster."""
    from renderer.effective.helm import require_helm

    helm = require_helm(req.helm)
    if req.platform_chart is not None and not (req.platform_chart / "Chart.yaml").is_file():
        raise fail("PLT-VERSION", f"--platform-chart {req.platform_chart}: no Chart.yaml "
                   "(a copy of packages/core/platform/)")
    if not req.all_clusters:
        one = _staged(req, req.path)
        _helm_answers(helm)
        _show(req, one, _rendered(helm, [one], 1)[0])
        return EXIT_OK
    from renderer.effective.helm import BATCH
    from renderer.pipeline import cluster_paths, jobs_for

    jobs = jobs_for(req.jobs)
    paths = cluster_paths(req.path, True)
    size = min(BATCH, max(1, -(-len(paths) // jobs)))  # a helm batch, or fewer so that every worker has one
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    code = EXIT_OK
    documents: list[str] = []
    for outputs in _chunk_outputs(req, helm, chunks, jobs):
        if isinstance(outputs, RenderError):
            raise outputs  # helm's own failure (PLT-HELM) stops the run
        for stdout, stderr, exit_code in outputs:
            sys.stderr.write(stderr)
            if req.fmt == "json":
                documents += [stdout] if stdout else []
            else:
                sys.stdout.write(stdout)
            code = max(code, exit_code)
    if req.fmt == "json":
        sys.stdout.write(json_list(documents))
    return code


EFFECTIVE_KIND, EFFECTIVE_LIST_KIND = "Effective", "EffectiveList"


def json_list(documents: list[str]) -> str:
    """The ``EffectiveList`` of ``--all -o json``: each cluster's ``Effective`` document (the text
    ``effective CLUSTER -o json`` prints) one level in, byte for byte what ``json.dumps(indent=2)``
    writes for the whole. The texts are composed, not parsed again: a cluster's document is about 41 KB
    (issue 24), and JSON text holds no raw line break inside a string, so indenting each line is exact."""
    head = f'{{\n  "apiVersion": "{API_VERSION}",\n  "kind": "{EFFECTIVE_LIST_KIND}",\n  "clusters": '
    if not documents:
        return head + "[]\n}\n"
    items = ",\n".join("    " + text.rstrip("\n").replace("\n", "\n    ") for text in documents)
    return head + "[\n" + items + "\n  ]\n}\n"


_WORK: tuple[EffectiveRequest, str] | None = None  # set in the parent before the fork; workers inherit it


def _chunk_outputs(req: EffectiveRequest, helm: str, chunks: list[list[Path]],
                   jobs: int) -> Iterator[list[tuple[str, str, int]] | RenderError]:
    """Each chunk's clusters as (stdout, stderr, exit code) of ``effective CLUSTER``, in order; with
    ``jobs`` > 1 in that many forked workers (each renders its chunk's charts in one helm process)."""
    global _WORK
    from renderer.pipeline import _can_fork

    _WORK = (req, helm)
    try:
        if jobs <= 1 or len(chunks) < 2 or not _can_fork():
            yield from (_outputs(chunk) for chunk in chunks)
            return
        import multiprocessing

        from renderer.batch import unwind_on_terminate

        with multiprocessing.get_context("fork").Pool(min(jobs, len(chunks)), initializer=unwind_on_terminate) as pool:
            yield from pool.imap(_outputs, chunks)
    finally:
        _WORK = None


def _outputs(paths: list[Path]) -> list[tuple[str, str, int]] | RenderError:
    """What ``effective CLUSTER`` prints for each of ``paths`` and its exit code; the charts of the
    clusters that render are rendered many to a helm process. helm's own failure is returned (not
    raised: it crosses the worker's pipe as a value)."""
    import io

    assert _WORK is not None
    req, helm = _WORK
    staged_or_refused: list[_Staged | RenderError] = []
    for path in paths:
        try:
            staged_or_refused.append(_staged(req, path))
        except RenderError as exc:
            staged_or_refused.append(exc)
    staged = [s for s in staged_or_refused if not isinstance(s, RenderError)]
    try:
        if staged:
            _helm_answers(helm)
        rendered = iter(_rendered(helm, staged, 1))
    except RenderError as exc:
        return RenderError(exc.findings, exc.exit_code)
    out = []
    for item in staged_or_refused:
        stdout, stderr = io.StringIO(), io.StringIO()
        streams = report.Streams(stdout, stderr)
        code = EXIT_OK
        try:
            if isinstance(item, RenderError):
                raise item
            _show(req, item, next(rendered), streams)
        except RenderError as exc:  # as the loop's run for this cluster would report it
            report.write(exc.findings, stream=streams.stderr)
            code = exc.exit_code
        out.append((stdout.getvalue(), stderr.getvalue(), code))
    return out


class _Staged(NamedTuple):
    result: Any
    version: str
    chart: Path
    warnings: list[Finding]


def _staged(req: EffectiveRequest, path: Path) -> _Staged:
    """The cluster rendered (refused as render refuses it) and the chart its platform release uses."""
    from renderer.effective.packages import cluster_chart
    from renderer.pipeline import render

    result = render(path, variants=req.variants, root=req.root, refuse=False)
    # Refuse as render does, except that --platform-chart answers an unknown platform.version.
    errors = [f for f in result.findings if f.severity == ERROR and
              not (f.code == "PLT-VERSION" and req.platform_chart is not None)]
    if errors:
        raise RenderError(result.findings)
    version, chart = cluster_chart(result, req.platform_chart)
    return _Staged(result, version, chart, list(result.findings))


def _helm_answers(helm: str) -> None:
    """A binary that does not answer ``helm version`` as helm 3 or 4 is PLT-HELM, never an empty
    platform (decided after the render, so an overlay's own errors come first; once per process)."""
    from renderer.effective.choice import helm_version

    if helm not in _ANSWERED:
        helm_version(helm)
        _ANSWERED.add(helm)


_ANSWERED: set[str] = set()


def _rendered(helm: str, staged: list[_Staged], jobs: int) -> list[Any]:
    """Each cluster's chart render, many to a helm process per chart folder; helm's own failure is
    PLT-HELM at the chart it was rendering."""
    from renderer.effective.helm import HelmFailure, render_platform, render_platform_many
    from renderer.effective.packages import platform_inputs

    out: list[Any] = [None] * len(staged)
    by_chart: dict[Path, list[int]] = {}
    for index, item in enumerate(staged):
        by_chart.setdefault(item.chart, []).append(index)
    for chart, indexes in by_chart.items():
        inputs = [platform_inputs(staged[i].result)[:2] for i in indexes]
        try:
            if len(inputs) == 1:
                renders = [render_platform(helm, chart, *inputs[0])]
            else:
                # shared: the effective set only reads helm's documents (ssa_merge builds new maps), so the
                # same document text of many clusters is one object, not a deep copy each (issue 24)
                renders = render_platform_many(helm, chart, inputs, jobs, shared=True)
        except HelmFailure as exc:
            raise fail("PLT-HELM", exc.message, chart_location(chart)) from None
        for index, rendered in zip(indexes, renders, strict=True):
            out[index] = rendered
    return out


def chart_location(chart: Path) -> Location:
    """Where helm's own failure is reported: the chart it was rendering (not the overlay)."""
    return Location(str(chart / "Chart.yaml"), 1, 1)


def _show(req: EffectiveRequest, staged: _Staged, rendered: Any, streams: report.Streams | None = None) -> None:
    from renderer.effective.packages import effective_set

    streams = streams or report.Streams(sys.stdout, sys.stderr)
    for warning in staged.warnings:
        streams.stderr.write(warning.format() + "\n")
    found = effective_set(staged.result, "", staged.chart, staged.version, rendered=rendered)
    if req.fmt == "json":
        _json(staged.result.overlay.name, found, streams)
    else:
        report.show("effective", req.fmt, found, streams)


def _json(cluster: str, found: EffectiveSet, streams: report.Streams) -> None:
    """One cluster's ``Effective`` document (``cozy-render schema output effective``)."""
    streams.stdout.write(json.dumps({"apiVersion": API_VERSION, "kind": EFFECTIVE_KIND, "cluster": cluster,
                                     "platformVersion": found.version,
                                     "assumedAbsent": list(found.assumed_absent),
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
