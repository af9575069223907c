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
    from renderer.pipeline import Options

SOURCE_PREFIX = "# Source: "


def run(req: RenderRequest) -> int:
    if req.out is None and not req.all_clusters and req.variants is None and not req.annotate:
        return write_cached(req, req.path, req.root, lambda: _stream(req))
    from renderer import output
    from renderer.commands import fleet

    watched = req.all_clusters and fleet.watching()
    # --out needs only each cluster's files and what it read: workers send back just that (keep)
    done, seconds = fleet.run_watched(req.path, _options(req), all_clusters=req.all_clusters, watched=watched,
                                      label="rendering", keep=written if req.out is not None else None)
    results = done.results
    if watched:
        report.show("findings", "text", report.FindingsReport(
            done.tagged(), None, len(done.clusters), sum(c.objects for c in done.clusters), done.exit_code, True,
            req.verbose, seconds))
        if done.exit_code:
            raise RenderError([], done.exit_code)  # every finding is printed above
    elif done.exit_code:
        raise RenderError(done.failures(), done.exit_code)
    else:
        report.write([f for _, f in done.tagged()])  # the warnings
    if req.out is None:
        objects = [o for r in results for o in r.manifests]
        if req.annotate:
            from renderer.emit import provenance

            if req.fmt == "json":
                sys.stdout.write(annotated_json(results, req.all_clusters))
            else:
                stream = fleet_stream(results, "yaml") if req.all_clusters else output.to_yaml(objects)
                sys.stdout.write(provenance.annotate(stream, results))
            return EXIT_OK
        if req.all_clusters:
            sys.stdout.write(fleet_stream(results, req.fmt))
            return EXIT_OK
        report.show("objects", req.fmt, objects)
        return EXIT_OK
    folders = [c.kept for c in done.clusters]
    files: dict[str, str] = {}
    for folder in folders:
        prefix = f"{folder.overlay.name}/" if req.all_clusters else ""
        for name, content in folder.files.items():
            files[prefix + name] = content
    return output.write_out(req.out, files, folders, req.all_clusters, req.check_only, req.fmt)  # guard, check, write


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
    from renderer.output import flux

    overlay = result.overlay
    return Written(ReadPaths(overlay.root, list(getattr(overlay, "resolved", [])), overlay.name, overlay.cluster_file),
                   list(result.inputs), output.directory_files(flux.disable_substitution(result.manifests)))


def fleet_stream(results: "list[RenderResult]", fmt: str) -> str:
    """``render --all`` to stdout: every object marked with its cluster, so a stream piped to
    ``kubectl apply`` cannot be mistaken for one cluster's. YAML: a ``# Source: <cluster.yaml>`` line
    (repository-relative) opens each document, as ``helm template`` marks its templates; JSON: one
    ``v1`` List of every cluster's objects in cluster order (one document, as ``schema output render``
    says; each object carries the cluster label)."""
    from renderer import output

    if fmt == "json":
        return output.to_json([o for r in results for o in r.manifests])
    from renderer.escape import printable  # a folder name must not end the comment and inject YAML

    documents = []
    for r in results:
        # relative to the repository root, so the bytes do not depend on the working directory
        source = f"{SOURCE_PREFIX}{printable(r.overlay.cluster_file.relative_to(r.overlay.root).as_posix())}\n"
        documents += [source + output.to_yaml([obj]).removeprefix("---\n") for obj in r.manifests]
    return "---\n".join(documents)


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


def _options(req: RenderRequest) -> "Options":
    from renderer.pipeline import Options, jobs_for

    return Options(req.variants, req.root, None, req.kubernetes_version, req.validator, strict=req.strict,
                   jobs=jobs_for(req.jobs))


def _stream(req: RenderRequest) -> Produced:
    from renderer import output
    from renderer.pipeline import run

    done = run(req.path, _options(req))
    if done.exit_code:
        raise RenderError(done.failures(), done.exit_code)
    (result,) = done.results
    text = output.to_json(result.manifests) if req.fmt == "json" else output.to_yaml(result.manifests)
    return text, report.text(result.findings), result.inputs
