"""Where a cluster's overlay file and its repository root are: plain ``os.path`` work, importing
nothing of the loader (not even ``pathlib``), because a render-cache hit (``renderer.cache.replay``)
needs exactly this and nothing else before it replays. The ``*_path`` functions are the string
forms; ``find_cluster_file`` and ``find_root`` wrap them for callers that hold a ``Path``."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a cache hit never does)
if TYPE_CHECKING:
    from pathlib import Path

CLUSTER_FILE = "cluster.yaml"
# argocd-cmp-server unpacks each request into <ARGOCD_CMP_WORKDIR or $TMPDIR>/_cmp_server/<random>/
# (argo-cd common/common.go DefaultCMPWorkDirName, cmpserver/plugin/plugin.go getTempDirMustCleanup).
CMP_WORK_DIR_NAME = "_cmp_server"


def cluster_file_path(path: str) -> str:
    """``path`` itself, or its ``cluster.yaml`` when it is a folder."""
    return os.path.join(path, CLUSTER_FILE) if os.path.isdir(path) else path


def root_path(cluster_file: str) -> str:
    """The overlay repository root that ``inherits`` and ``manifests`` paths must stay inside.

    The nearest ancestor holding ``.git``; else, for the ``<root>/clusters/<name>/cluster.yaml``
    layout (Argo CD tarballs often exclude ``.git``), the directory above ``clusters``.
    """
    start = os.path.dirname(os.path.abspath(cluster_file))  # lexical: a symlinked cluster file must not pick its root
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            break
        candidate = parent
    above = os.path.dirname(start)
    if os.path.basename(above) == "clusters":
        return os.path.dirname(above)
    return start


def find_cluster_file(path: Path) -> Path:
    if path.is_dir():
        return path / CLUSTER_FILE
    return path


def find_root(cluster_file: Path) -> Path:
    """``root_path`` of a ``Path``."""
    from pathlib import Path

    return Path(root_path(os.fspath(cluster_file)))


def checkout_parts(app: tuple[str, ...], source_path: str) -> tuple[tuple[str, ...], str] | None:
    """``renderer.cmp.checkout`` on path parts (``app``: the working directory's absolute parts, the
    first being ``/``): the unpacked folder's parts and its path inside the repository, or None."""
    parts = [p for p in source_path.split("/") if p not in ("", ".")]  # PurePosixPath(...).parts, less the root
    if not parts or ".." in parts or source_path_refusal(app, source_path) is not None:
        return None
    if tuple(app[-len(parts):]) == tuple(parts):
        return tuple(app[:-len(parts)]), ""
    for i in range(len(app) - 2, -1, -1):
        if app[i] == CMP_WORK_DIR_NAME:
            inside = app[i + 2:]
            if inside and len(inside) < len(parts) and tuple(parts[-len(inside):]) == tuple(inside):
                return tuple(app[:i + 2]), "/".join(parts[:-len(inside)])
            break
    return None


def source_path_refusal(app: tuple[str, ...], source_path: str) -> str | None:
    """Why ARGOCD_APP_SOURCE_PATH may not place the repository root (issue 34 item 19), or None.

    The source path is the Application's folder inside the repository, so the root it gives is the
    working directory less that many folders. An absolute path, a ``..``, or more folders than lie
    between the working directory and the checkout would put the root above what Argo CD unpacked,
    and every ``inherits``/``manifests`` path could then reach the sidecar's own files. The checkout is
    the ``_cmp_server/<id>`` folder the cmp-server unpacked into, else the nearest folder holding
    ``.git``; with neither (a tarball without .git outside a cmp-server) nothing bounds it but the
    path's own form."""
    if source_path.startswith("/"):
        return "is an absolute path; it must name the Application's folder inside the repository"
    parts = [p for p in source_path.split("/") if p not in ("", ".")]
    if ".." in parts:
        return "names a parent folder (..); it must name the Application's folder inside the repository"
    if not parts or tuple(app[-len(parts):]) != tuple(parts):
        return None  # it does not place the root (the sub-tree form keeps the checkout folder itself)
    if len(app) - len(parts) < _checkout_depth(app):
        return "names folders above the checkout Argo CD unpacked; the repository root cannot leave it"
    return None


def _checkout_depth(app: tuple[str, ...]) -> int:
    """How many leading parts of ``app`` name the checkout folder (0 when nothing marks it)."""
    for i in range(len(app) - 2, -1, -1):
        if app[i] == CMP_WORK_DIR_NAME:
            return i + 2
    for depth in range(len(app), 0, -1):
        if os.path.exists(os.path.join(*app[:depth], ".git")):
            return depth
    return 0
