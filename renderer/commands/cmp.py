"""Argo CD Config Management Plugin (v2 sidecar) entry points.

``argocd-cmp-server`` runs ``cozy-render cmp generate`` with the working directory set to the
Application's path (a cluster folder holding cluster.yaml). stdout must carry manifests only;
everything else goes to stderr, which Argo CD shows in the UI on failure. Parameters arrive as
JSON in ARGOCD_APP_PARAMETERS (the PARAM_* variables are a lossy flattening and are ignored).
"""

from __future__ import annotations

import click

from renderer.cli import guarded

# Announced to the Argo CD UI by `cmp parameters`; defaults are applied here, since Argo CD never
# sends announced defaults to the plugin.
PARAMETERS = [
    {"name": "vars", "title": "Overlay vars", "collectionType": "map",
     "tooltip": "Entries override the overlay's vars (strings) for this Application."},
    {"name": "strict", "title": "Fail on warnings", "string": "false",
     "tooltip": "true: rule warnings fail the sync instead of being logged (also: plugin env strict)."},
    {"name": "kubernetes-version", "title": "Kubernetes version for schema validation",
     "tooltip": "Minor version (1.25-1.37) whose core-kind schemas validate the output. Default: the "
                "destination cluster's version (KUBE_VERSION), else 1.33."},
]


@click.group("cmp")
def cmp() -> None:
    """Argo CD Config Management Plugin commands (run by argocd-cmp-server)."""


@cmp.command("generate")
@click.option("--path", "path", default=".", type=click.Path(exists=True, file_okay=True),
              help="Cluster folder (default: the working directory Argo CD sets).")
@guarded
def generate(path: str) -> int:
    """Print the Application's manifests to stdout (YAML stream)."""
    from pathlib import Path

    from renderer.app import cmp_generate

    return cmp_generate(Path(path))


@cmp.command("parameters")
def parameters() -> None:
    """Print the parameter announcement (JSON) for plugin.yaml parameters.dynamic."""
    import json

    click.echo(json.dumps(PARAMETERS))


from renderer.commands import ALL  # noqa: E402

ALL.append(cmp)
