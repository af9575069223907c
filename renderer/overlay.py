"""Load a cluster overlay: follow ``inherits``, merge the layers, validate, and apply templates.

Merge rules (the README documents them for users):
- maps merge key by key, the later layer wins;
- lists are replaced whole, unless the key is written ``key+`` which appends to the inherited list;
- ``null`` deletes the inherited key.

Every value keeps the file, line and column of the layer that set it last.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location, RenderError, fail
from renderer.tree import copy_tree
from renderer.yamlio import Locations, Path_, display_path, load_documents, read_text

API_VERSION = "render.cozystack.io/v1alpha1"
KIND = "ClusterOverlay"
CLUSTER_FILE = "cluster.yaml"
APPEND_SUFFIX = "+"


class Overlay:
    """The merged, templated overlay of one cluster and where each value came from."""

    def __init__(self, name: str, data: dict[str, Any], locs: Locations, root: Path, cluster_file: Path,
                 layers: list[Path] | None = None) -> None:
        self.name = name
        self.data = data
        self.locs = locs
        self.root = root
        self.cluster_file = cluster_file
        self.layers = layers or []

    def locate(self, path: Path_) -> Location | None:
        """Location of the value at ``path``, or of its nearest ancestor that has one."""
        path = tuple(path)
        while True:
            loc = self.locs.get(path)
            if loc is not None:
                return loc
            if not path:
                return None
            path = path[:-1]

    def get(self, *path: Any, default: Any = None) -> Any:
        node: Any = self.data
        for key in path:
            in_list = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
            if (isinstance(node, dict) and key in node) or in_list:
                node = node[key]
            else:
                return default
        return node


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


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def confine(raw: str, base_dir: Path, root: Path, where: Location | None, what: str) -> Path:
    """Resolve a repository-relative reference, refusing absolute paths, escapes and symlinks out."""
    if not isinstance(raw, str) or not raw:
        raise fail("OVL-PATH", f"{what} must be a non-empty relative path", where)
    if os.path.isabs(raw):
        raise fail("OVL-PATH", f"{what} {raw!r} must be relative to the file that names it", where)
    lexical = Path(os.path.normpath(base_dir / raw))
    real_root = root.resolve()
    if not _inside(lexical, root) and not _inside(lexical, real_root):
        raise fail("OVL-PATH", f"{what} {raw!r} points outside the overlay repository {root}", where)
    real = lexical.resolve()
    if not _inside(real, real_root):
        raise fail("OVL-PATH", f"{what} {raw!r} resolves (through a symlink) outside the overlay repository", where)
    if not real.is_file():
        raise fail("OVL-PATH", f"{what} {raw!r} does not exist", where)
    return real


def _as_schema_sees_it(data: Any) -> Any:
    """A layer as the schema sees it: ``key+`` is the same key, and ``key: null`` (a deletion, not a
    value) is absent."""
    if isinstance(data, dict):
        return {(k[:-1] if k.endswith(APPEND_SUFFIX) else k): _as_schema_sees_it(v)
                for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_as_schema_sees_it(v) for v in data]
    return data


def _replace_locs(locs: Locations, path: Path_, layer_locs: Locations, layer_path: Path_) -> None:
    n = len(path)
    for key in [k for k in locs if k[:n] == path]:
        del locs[key]
    m = len(layer_path)
    for key, loc in layer_locs.items():
        if key[:m] == layer_path:
            locs[path + key[m:]] = loc


def merge_layer(base: dict[str, Any], locs: Locations, layer: dict[str, Any], layer_locs: Locations,
                path: Path_ = (), layer_path: Path_ = ()) -> None:
    """Merge ``layer`` into ``base`` in place (see the module docstring for the rules)."""
    for raw_key, value in layer.items():
        append = raw_key.endswith(APPEND_SUFFIX) and isinstance(value, list)
        key = raw_key[:-1] if append else raw_key
        here, there = path + (key,), layer_path + (raw_key,)
        if value is None:
            base.pop(key, None)
            _replace_locs(locs, here, {}, ())
            continue
        current = base.get(key)
        if append:
            start = len(current) if isinstance(current, list) else 0
            merged = (list(current) if isinstance(current, list) else []) + list(value)
            base[key] = merged
            if not isinstance(current, list):
                _replace_locs(locs, here, {}, ())
            if there in layer_locs:
                locs.setdefault(here, layer_locs[there])
            for i in range(len(value)):
                _replace_locs(locs, here + (start + i,), layer_locs, there + (i,))
        elif isinstance(value, dict) and isinstance(current, dict):
            merge_layer(current, locs, value, layer_locs, here, there)
        else:
            base[key] = copy_tree(value)
            _replace_locs(locs, here, layer_locs, there)


def _resolve_appends(data: Any) -> Any:
    """A ``key+`` with nothing to append to (first layer) is just ``key``."""
    if isinstance(data, dict):
        return {(k[:-1] if k.endswith(APPEND_SUFFIX) and isinstance(v, list) else k): _resolve_appends(v)
                for k, v in data.items()}
    if isinstance(data, list):
        return [_resolve_appends(v) for v in data]
    return data


def _load_layer(path: Path, root: Path) -> tuple[dict[str, Any], Locations, str]:
    from renderer.layercache import parsed_layer

    display = display_path(path)
    data, locs = parsed_layer(display, read_text(path, display), _parse_layer)  # shared bases parse once
    return data, locs, display


def _parse_layer(text: str, display: str) -> tuple[dict[str, Any], Locations]:
    docs = load_documents(text, display)
    if len(docs) != 1 or not isinstance(docs[0][0], dict):
        raise fail("OVL-SCHEMA", "an overlay file holds exactly one YAML mapping", Location(display, 1, 1))
    data, locs = docs[0]
    from renderer import overlay_schema

    overlay_schema.validate_layer(_as_schema_sees_it(data), locs, display)
    return data, locs


def load_overlay(path: Path, root: Path | None = None, extra_vars: dict[str, str] | None = None) -> Overlay:
    cluster_file = find_cluster_file(path)
    if not cluster_file.is_file():
        raise fail("OVL-PATH", f"no overlay at {path} (expected a cluster directory or its {CLUSTER_FILE})",
                   Location(display_path(path)))
    root = (root or find_root(cluster_file)).resolve()
    cluster_file = cluster_file.resolve()
    if not _inside(cluster_file, root):
        raise fail("OVL-PATH", f"overlay is outside the repository root {root}", Location(display_path(cluster_file)))

    merged: dict[str, Any] = {}
    locs: Locations = {}
    applied: list[Path] = []
    stack: list[Path] = []

    def apply(file: Path, via: Location | None) -> None:
        if file in stack:
            chain = " -> ".join(display_path(p) for p in [*stack[stack.index(file):], file])
            raise fail("OVL-INHERIT", f"inherits cycle: {chain}", via)
        if file in applied:
            return  # a diamond: a shared base is applied once, at its first position
        stack.append(file)
        data, layer_locs, _display = _load_layer(file, root)
        for i, raw in enumerate(data.get("inherits") or []):
            where = layer_locs.get(("inherits", i))
            apply(confine(raw, file.parent, root, where, "inherits entry"), where)
        stack.pop()
        applied.append(file)
        layer = {k: v for k, v in data.items() if k != "inherits"}
        if file != cluster_file:
            layer.pop("metadata", None)  # a base layer does not name the cluster
        merge_layer(merged, locs, layer, layer_locs)

    apply(cluster_file, None)
    merged = _resolve_appends(merged)
    if extra_vars:
        merged.setdefault("vars", {}).update(extra_vars)
    display = display_path(cluster_file)
    from renderer import overlay_schema

    overlay_schema.validate_merged(merged, locs, display)

    name = merged["metadata"]["name"]
    dir_name = cluster_file.parent.name
    if name != dir_name:
        raise fail("OVL-NAME", f"metadata.name {name!r} must equal the cluster directory name {dir_name!r}",
                   locs.get(("metadata", "name")))
    overlay = Overlay(name, merged, locs, root, cluster_file, applied)
    _apply_templates(overlay)
    return overlay


def _apply_templates(overlay: Overlay) -> None:
    data = overlay.data
    context = {
        "vars": data.get("vars") or {},
        "cluster": {
            "name": overlay.name,
            "host": data.get("host") or {},
            "platform": {"variant": (data.get("platform") or {}).get("variant")},
        },
    }
    findings: list[Finding] = []

    def walk(node: Any, path: Path_) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, path + (k,)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, path + (i,)) for i, v in enumerate(node)]
        if isinstance(node, str) and ("{{" in node or "{%" in node or "{#" in node):
            from renderer import templating

            try:
                return templating.render_string(node, context)
            except templating.TemplateProblem as exc:
                findings.append(Finding("OVL-TEMPLATE", str(exc), overlay.locate(path)))
                return node
        return node

    for key in list(data):
        if key != "vars":
            data[key] = walk(data[key], (key,))
    if findings:
        raise RenderError(findings)
