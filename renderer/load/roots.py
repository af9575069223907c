"""Where a cluster's overlay file and its repository root are: plain ``os.path`` work, importing
nothing of the loader, because a render-cache hit (``renderer.commands.common.write_cached``) needs
exactly this and nothing else before it replays."""

from __future__ import annotations

import os
from pathlib import Path

CLUSTER_FILE = "cluster.yaml"


def find_cluster_file(path: Path) -> Path:
    if path.is_dir():
        return path / CLUSTER_FILE
    return path


def find_root(cluster_file: Path) -> Path:
    """The overlay repository root that ``inherits`` and ``manifests`` paths must stay inside.

    The nearest ancestor holding ``.git``; else, for the ``<root>/clusters/<name>/cluster.yaml``
    layout (Argo CD tarballs often exclude ``.git``), the directory above ``clusters``.
    """
    start = Path(os.path.abspath(cluster_file)).parent  # lexical: a symlinked cluster file must not pick its root
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    if start.parent.name == "clusters":
        return start.parent.parent
    return start
