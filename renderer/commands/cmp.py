"""Argo CD Config Management Plugin (v2 sidecar) commands.

``argocd-cmp-server`` runs ``cozy-render cmp generate`` with the working directory set to the
Application's path (a cluster folder holding cluster.yaml). stdout carries manifests only;
everything else goes to stderr, which Argo CD shows in the UI on failure. Parameters arrive as
JSON in ARGOCD_APP_PARAMETERS (the PARAM_* variables are a lossy flattening and are ignored), with
plugin env entries (ARGOCD_ENV_*) and KUBE_VERSION as fallbacks (``renderer.cmp``).
"""

from __future__ import annotations

import sys

from renderer import report
from renderer.commands.common import Produced, write_cached
from renderer.errors import EXIT_OK
from renderer.requests import CmpGenerateRequest

# Announced to the Argo CD UI statically by docs/argocd/install/plugin.yaml (the same list, tests/commands/test_cmp.py
# checks), and printed by `cmp parameters` for tools that call it. Defaults are applied by the plugin, since
# Argo CD never sends announced defaults to it.
PARAMETERS = [
    {"name": "vars", "title": "Overlay vars", "collectionType": "map",
     "tooltip": "Entries override the overlay's vars (strings) for this Application."},
    {"name": "strict", "title": "Fail on warnings", "string": "false",
     "tooltip": "true: rule warnings fail the sync instead of being shown on the platform Package (also: plugin "
                "env strict)."},
    {"name": "kubernetes-version", "title": "Kubernetes version for schema validation",
     "tooltip": "Minor version (1.25-1.37) whose core-kind schemas validate the output. Default: the "
                "destination cluster's version (KUBE_VERSION), else 1.33."},
    {"name": "chart", "title": "Platform chart judge", "string": "model",
     "tooltip": "model: the built-in model of the vendored platform chart (default); helm: render the real "
                "chart with the sidecar's helm and fail the sync on its errors; auto: helm when the sidecar "
                "has one (also: plugin env chart)."},
]


def generate(req: CmpGenerateRequest, cache_key: list[str] | None = None) -> int:
    """``cache_key``: the start-up fast path's render cache key fields (``write_cached``)."""
    from renderer import cmp

    request = cmp.settings(req.parameters, dict(req.plugin_env), req.kube_version)
    unpacked = cmp.checkout(req.path, req.source_path)

    def produce() -> Produced:
        text, warnings, inputs = cmp.render_for_argocd(req.path, request, unpacked)
        return text, report.text(warnings), inputs

    return write_cached(req, req.path, unpacked.root if unpacked else None, produce, cache_key)


def parameters() -> int:
    import json

    sys.stdout.write(json.dumps(PARAMETERS) + "\n")
    return EXIT_OK
