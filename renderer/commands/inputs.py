"""``cozy-render inputs``: every repository file a cluster's render reads (``renderer.inputs``)."""

from __future__ import annotations

import json
import sys

from renderer.errors import EXIT_OK
from renderer.requests import InputsRequest


def run(req: InputsRequest) -> int:
    from renderer.inputs import cluster_inputs, text_lines
    from renderer.pipeline import cluster_paths

    clusters = [cluster_inputs(p, req.variants, req.root) for p in cluster_paths(req.path, req.all_clusters)]
    if req.fmt == "json":
        document = {"apiVersion": "cozy-render/v1", "kind": "Inputs", "clusters": clusters}  # output-schemas/inputs
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in text_lines(clusters, req.all_clusters)))
    return EXIT_OK
