"""``cozy-render inputs``: every repository file a cluster's render reads (``renderer.inputs``)."""

from __future__ import annotations

from typing import Any

from renderer import pipeline, report
from renderer.errors import EXIT_OK, RenderError
from renderer.escape import json_text, printable
from renderer.inputs import inputs_of, text_lines
from renderer.requests import InputsRequest


def run(req: InputsRequest) -> int:
    # not refused by error findings: a cluster that fails its rules still reads the same files
    done = pipeline.run(req.path, pipeline.Options(req.variants, req.root, validator="builtin", refuse=False),
                        all_clusters=req.all_clusters, keep=inputs_of)
    refused = [c for c in done.clusters if c.refused]
    if refused:
        raise RenderError([f for c in refused for f in c.findings], max(c.refused for c in refused))
    report.show("inputs", req.fmt, (req.all_clusters, [c.kept for c in done.clusters]))
    return EXIT_OK


@report.reporter("inputs", "json")
def _json(payload: tuple[bool, list[dict[str, Any]]], streams: report.Streams) -> None:
    document = {"apiVersion": report.JSON_API_VERSION, "kind": "Inputs", "clusters": payload[1]}  # output-schemas

    streams.stdout.write(json_text(document, indent=2) + "\n")


@report.reporter("inputs", "text")
def _text(payload: tuple[bool, list[dict[str, Any]]], streams: report.Streams) -> None:
    all_clusters, clusters = payload

    # a file or cluster name is input: one line each, whatever it holds (the tab between them is ours)
    shown = [{**c, "name": printable(c["name"]), "inputs": [printable(p) for p in c["inputs"]]} for c in clusters]
    streams.stdout.write("".join(line + "\n" for line in text_lines(shown, all_clusters)))
