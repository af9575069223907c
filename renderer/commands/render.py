"""``cozy-render render``: one cluster, or every cluster of a tree, as a stream or a kustomize folder.

Every form runs ``pipeline.run``; the render cache (``write_cached``) wraps the one-cluster stream
and replays its bytes, never a different render.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from renderer import report
from renderer.commands.common import Produced, write_cached
from renderer.errors import EXIT_OK, RenderError
from renderer.requests import RenderRequest

if TYPE_CHECKING:  # the render cache's hit path imports no stage of the pipeline
    from renderer.emit import RenderResult
    from renderer.pipeline import Options, Run

SOURCE_PREFIX = "# Source: "


def run(req: RenderRequest, cache_key: "list[str] | None" = None) -> int:
    """``cache_key``: the start-up fast path's render cache key fields (``write_cached``)."""
    part = None
    if req.shard is not None:
        from renderer import shard

        part = shard.requested(req.shard, req.all_clusters)
        if req.check_only:
            raise shard.refusal("--shard with --check: check the whole --out folder in one run (a shard "
                                "would count the other shards' folders as stale)")
    cacheable = req.chart in (None, "model") and req.helm is None  # helm's answer is not in the cache key
    if req.out is None and not req.all_clusters and req.variants is None and not req.annotate and cacheable:
        return write_cached(req, req.path, req.root, lambda: _stream(req), cache_key)
    from renderer.commands import fleet

    sharded_json = part is not None and req.out is not None and req.fmt == "json"  # a report for `merge`
    watched = req.all_clusters and fleet.watching() and not sharded_json
    # --out needs only each cluster's files and what it read: workers send back just that (keep)
    options = _options(req, part)
    done, seconds = fleet.run_watched(req.path, options, all_clusters=req.all_clusters,
                                      watched=watched, label="rendering",
                                      keep=written if req.out is not None else None)
    results = done.results
    if sharded_json:
        from renderer import shard_report as sharded

        assert part is not None
        code = done.exit_code or _write(req, done, part)  # a refused fleet writes nothing, as without --shard
        from renderer.effective.choice import choose

        chart = options.chart or choose(req.chart, req.helm)  # the document names its judge, as check's does
        findings = report.FindingsReport(done.tagged(), chart, len(done.clusters),
                                         sum(c.objects for c in done.clusters), code)
        ran = [(c.path, c.name) for c in done.clusters]
        sharded.show_json("findings", findings, sharded.section(part, "render", req, ran, ignored=("out",)))
        return code
    if watched:
        tagged = done.tagged()
        if done.exit_code:  # a refused fleet's warnings fail it under --strict and say so
            labelled = report.strict_labelled([f for _, f in tagged], req.strict)
            tagged = [(name, f) for (name, _), f in zip(tagged, labelled, strict=True)]
        report.show("findings", "text", report.FindingsReport(
            tagged, options.chart, len(done.clusters), sum(c.objects for c in done.clusters), done.exit_code, True,
            req.verbose, seconds))
        if done.exit_code:
            raise RenderError([], done.exit_code)  # every finding is printed above
    elif done.exit_code:
        raise RenderError(report.strict_labelled(done.failures(), req.strict), done.exit_code)
    else:
        if options.chart is not None:  # a judge other than the default model is named, as check names it
            sys.stderr.write(f"cozy-render: {options.chart.describe()}\n")
        report.write([f for _, f in done.tagged()])  # the warnings
    if req.out is None:
        objects = [o for r in results for o in r.manifests]
        if req.annotate:
            report.show("annotated", req.fmt, Annotated(results, req.all_clusters))
            return EXIT_OK
        if req.all_clusters:
            report.show("fleet", req.fmt, results)
            return EXIT_OK
        report.show("objects", req.fmt, objects)
        return EXIT_OK
    return _write(req, done, part)


def _write(req: RenderRequest, done: "Run", part: object = None) -> int:
    """The ``--out`` folder(s) of a run (guard, check, write); returns the exit code."""
    from renderer import output

    assert req.out is not None
    folders = [c.kept for c in done.clusters]
    files: dict[str, str] = {}
    for folder in folders:
        prefix = f"{folder.overlay.name}/" if req.all_clusters else ""
        for name, content in folder.files.items():
            files[prefix + name] = content
    return output.write_out(req.out, files, folders, req.all_clusters, req.check_only, req.fmt, shard=part)


class ReadPaths(NamedTuple):
    """What ``--out``'s guard needs to know of an overlay (``renderer.output.refuse_unsafe_target``)."""

    root: Path
    resolved: list[tuple[Path, Path | None]]
    name: str
    cluster_file: Path


class Written(NamedTuple):
    """One cluster's ``--out`` folder and everything its render read (small enough to send back from a
    worker; it stands in for the render in the guard)."""

    overlay: ReadPaths
    inputs: list[Path]
    files: dict[str, str]


def written(result: "RenderResult") -> Written:
    from renderer import output
    from renderer.check import flux

    overlay = result.overlay
    return Written(ReadPaths(overlay.root, list(getattr(overlay, "resolved", [])), overlay.name, overlay.cluster_file),
                   list(result.inputs), output.directory_files(flux.disable_substitution(result.manifests)))


@report.reporter("fleet", "json")
def _fleet_json(results: "list[RenderResult]", streams: report.Streams) -> None:
    """``render --all -o json``: one ``v1`` List of every cluster's objects in cluster order (one
    document, as ``schema output render`` says; each object carries the cluster label)."""
    from renderer import output

    streams.stdout.write(output.to_json([o for r in results for o in r.manifests]))


@report.reporter("fleet", "yaml")
def _fleet_yaml(results: "list[RenderResult]", streams: report.Streams) -> None:
    streams.stdout.write(fleet_stream(results))


def fleet_stream(results: "list[RenderResult]") -> str:
    """``render --all`` to stdout: every object marked with its cluster, so a stream piped to
    ``kubectl apply`` cannot be mistaken for one cluster's: a ``# Source: <cluster.yaml>`` line
    (repository-relative) opens each document, as ``helm template`` marks its templates."""
    from renderer import output
    from renderer.escape import printable  # a folder name must not end the comment and inject YAML

    documents = []
    for r in results:
        # relative to the repository root, so the bytes do not depend on the working directory
        source = f"{SOURCE_PREFIX}{printable(r.overlay.cluster_file.relative_to(r.overlay.root).as_posix())}\n"
        documents += [source + output.to_yaml([obj]).removeprefix("---\n") for obj in r.manifests]
    return "---\n".join(documents)


class Annotated(NamedTuple):
    """``render --annotate``'s renders, and whether they are a fleet's (``--all``)."""

    results: "list[RenderResult]"
    all_clusters: bool


@report.reporter("annotated", "yaml")
def _annotated_yaml(annotated: Annotated, streams: report.Streams) -> None:
    """The stream (a fleet's marked as ``fleet_stream`` marks it), each value's line ending in a ``# file:line``."""
    from renderer import output
    from renderer.emit import provenance

    results = annotated.results
    objects = [o for r in results for o in r.manifests]
    stream = fleet_stream(results) if annotated.all_clusters else output.to_yaml(objects)
    streams.stdout.write(provenance.annotate(stream, results))


@report.reporter("annotated", "json")
def _annotated_json(annotated: Annotated, streams: report.Streams) -> None:
    streams.stdout.write(annotated_json(annotated.results, annotated.all_clusters))


def annotated_json(results: "list[RenderResult]", all_clusters: bool) -> str:
    """``render --annotate -o json``: every rendered value with its provenance, as ``explain PATH
    --rendered -o json`` gives them (an ``Explanation``; ``schema output explain``); with ``--all`` an
    ``ExplanationList`` of one per cluster, in cluster order."""
    import json

    from renderer.commands.explain import OUTPUT_API, format_entries
    from renderer.emit import provenance
    from renderer.escape import json_text

    documents = [format_entries(provenance.entries_of([r]), "json", r.overlay.name) for r in results]
    if not all_clusters:
        return documents[0]
    return json_text({"apiVersion": OUTPUT_API, "kind": "ExplanationList",
                      "clusters": [json.loads(d) for d in documents]}, indent=2) + "\n"


def _options(req: RenderRequest, part: object = None) -> "Options":
    from renderer.pipeline import Options, jobs_for

    chart = None  # the built-in model judges the check stage; the manifests are the same either way
    if req.chart not in (None, "model") or req.helm is not None:  # a cold render never imports the choice
        from renderer.effective.choice import choose

        chart = choose(req.chart, req.helm)
    return Options(req.variants, req.root, None, req.kubernetes_version, req.validator, strict=req.strict,
                   jobs=jobs_for(req.jobs), shard=part, chart=chart)


def _stream(req: RenderRequest) -> Produced:
    from renderer.pipeline import run

    done = run(req.path, _options(req))
    if done.exit_code:
        raise RenderError(report.strict_labelled(done.failures(), req.strict), done.exit_code)
    (result,) = done.results
    return report.shown("objects", req.fmt, result.manifests), report.text(result.findings), result.inputs
