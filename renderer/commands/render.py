"""``cozy-render render``: one cluster, or every cluster of a tree, as a stream or a kustomize folder."""

from __future__ import annotations

import sys

from renderer import report
from renderer.commands.common import Produced, render_reporting_warnings, write_cached
from renderer.errors import EXIT_OK
from renderer.requests import RenderRequest


def run(req: RenderRequest) -> int:
    if req.out is None and not req.all_clusters and req.variants is None and not req.annotate:
        return write_cached(req, req.path, req.root, lambda: _stream(req))
    from renderer import output
    from renderer.commands import fleet
    from renderer.pipeline import cluster_paths

    paths = cluster_paths(req.path, req.all_clusters)
    if req.all_clusters and fleet.watching():
        results = fleet.render_watched(paths, strict=req.strict, verbose=req.verbose, variants=req.variants,
                                       root=req.root, kubernetes_version=req.kubernetes_version,
                                       validator=req.validator)
    else:
        results = render_reporting_warnings(paths, req.variants, req.root, req.strict, req.kubernetes_version,
                                            req.validator)
    if req.out is None:
        objects = [o for r in results for o in r.manifests]
        if req.annotate:
            from renderer.emit import provenance

            if req.fmt == "json":
                import json

                sys.stdout.write(json.dumps({"values": [e.as_dict() for e in provenance.entries_of(results)]},
                                            indent=2) + "\n")
            else:
                sys.stdout.write(provenance.annotate(output.to_yaml(objects), results))
            return EXIT_OK
        sys.stdout.write(output.to_json(objects) if req.fmt == "json" else output.to_yaml(objects))
        return EXIT_OK
    from renderer.output import flux

    files: dict[str, str] = {}
    for r in results:
        prefix = f"{r.overlay.name}/" if req.all_clusters else ""
        for name, content in output.directory_files(flux.disable_substitution(r.manifests)).items():
            files[prefix + name] = content
    return output.write_out(req.out, files, results, req.all_clusters, req.check_only, req.fmt)  # guard, check, write


def _stream(req: RenderRequest) -> Produced:
    from renderer import output
    from renderer.pipeline import render_many

    (result,), warnings = render_many([req.path], root=req.root, strict=req.strict,
                                      kubernetes_version=req.kubernetes_version, validator=req.validator)
    text = output.to_json(result.manifests) if req.fmt == "json" else output.to_yaml(result.manifests)
    return text, report.text(warnings), result.inputs
