"""``cozy-render inputs``: every repository file a cluster's render reads.

Argo CD regenerates an Application only when a commit touches a path of its
``argocd.argoproj.io/manifest-generate-paths`` annotation (argo-cd util/app/path/path.go
``AppFilesHaveChanged``); a file the render reads outside those paths serves stale manifests until
the next hard refresh. This lists exactly what a render opens, relative to the repository root, so
the annotation can be checked (tests/commands/test_inputs.py does it for the shipped ApplicationSet).

The list is what the render records while it runs (every overlay layer, every ``manifests:`` file,
and ``--variants`` files inside the repository), not a second guess at the overlay format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from renderer.load.variants import Variants, bundle_index
from renderer.pipeline import Options, run


def variant_overrides(variants: Variants) -> list[Path]:
    """The ``--variants`` files a render reads: Variants loads every override of a shipped file when it
    is built (shipped files come from the package, never from the repository)."""
    if variants.override is None:
        return []
    return [variants.override / rel for rel in bundle_index() if (variants.override / rel).is_file()]


def cluster_inputs(path: Path, variants: Path | None = None, root: Path | None = None) -> dict[str, Any]:
    """``{"name", "cluster", "inputs"}`` for one cluster: repository-relative POSIX paths, sorted.

    The render runs as ``render`` runs it (overlay, features, output schemas, rules) but is not
    refused by error findings: a cluster that fails its rules still reads the same files.
    """
    return inputs_of(run(path, Options(variants, root, validator="builtin", refuse=False)).one())


def inputs_of(result: Any) -> dict[str, Any]:
    """What ``cluster_inputs`` reports, of a finished render."""
    overlay, variant_data = result.overlay, result.variants
    repo_root = overlay.root
    read = {p.resolve() for p in [*result.inputs, *variant_overrides(variant_data)]}
    inside = sorted(p.relative_to(repo_root).as_posix() for p in read if repo_root in p.parents)
    return {"name": overlay.name, "cluster": overlay.cluster_file.relative_to(repo_root).as_posix(),
            "inputs": inside}


def text_lines(clusters: list[dict[str, Any]], all_clusters: bool) -> list[str]:
    """One path per line; with ``--all``, ``<cluster>\\t<path>`` so the lines stay grep- and cut-able."""
    if not all_clusters:
        return [p for c in clusters for p in c["inputs"]]
    return [f"{c['name']}\t{p}" for c in clusters for p in c["inputs"]]
