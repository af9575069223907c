"""Load a cluster overlay: follow ``inherits``, merge the layers, validate, and apply templates.

Merge rules (the README documents them for users):
- maps merge key by key, the later layer wins;
- lists are replaced whole, unless the key is written ``key+`` which appends to the inherited list;
- ``null`` deletes the inherited key.

Every value keeps the file, line and column of the layer that set it last.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location, RenderError, fail
from renderer.load import limits
from renderer.load.roots import CLUSTER_FILE, find_cluster_file, find_root
from renderer.load.yamlio import KEY, Locations, Path_, describe_file_type, display_path, load_documents, read_text
from renderer.tree import dig

API_VERSION = "render.cozystack.io/v1alpha1"
KIND = "ClusterOverlay"
APPEND_SUFFIX = "+"


# Every path a render resolved, in order: (the path as named, what it resolved to, or None when
# nothing is there). A symlinked layer appears as the link and its target; the render cache keys on
# all of it, so retargeting or deleting a link changes the result exactly as a fresh render would.
# Each overlay holds its own record (``Overlay.resolved``), passed explicitly to ``confine`` (the
# loader's inherits and the emitter's manifests entries). The cache sits above the whole pipeline
# (``renderer.commands.common.write_cached``), where no overlay is in reach, so it opens a scoped
# record (``recording``, a ContextVar) around the one render it stores instead of a module global.
Resolution = tuple[Path, Path | None]
_RECORDING: ContextVar[list[Resolution] | None] = ContextVar("resolutions", default=None)


@contextmanager
def recording() -> Iterator[list[Resolution]]:
    """Within the block, every path a render resolves is also added to the list it yields."""
    record: list[Resolution] = []
    token = _RECORDING.set(record)
    try:
        yield record
    finally:
        _RECORDING.reset(token)


def _record(resolved: list[Resolution], named: Path, real: Path | None) -> None:
    resolved.append((named, real))
    scoped = _RECORDING.get()
    if scoped is not None:
        scoped.append((named, real))


class Overlay:
    """The merged, templated overlay of one cluster and where each value came from."""

    def __init__(self, name: str, data: dict[str, Any], locs: Locations, root: Path, cluster_file: Path,
                 layers: list[Path] | None = None, resolved: list[Resolution] | None = None) -> None:
        self.name = name
        self.data = data
        self.locs = locs
        self.root = root
        self.cluster_file = cluster_file
        self.layers = layers or []
        # Shared with the render's record: manifests entries confined later are added to it.
        self.resolved: list[Resolution] = resolved if resolved is not None else []

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
        return dig(self.data, *path, default=default)


_DISPLAYED: dict[tuple[str, str, Any], str] = {}


def displayed(path: Path) -> str:
    """``display_path(path)``, remembered: a fleet names the same shared layers in every cluster, and the
    answer depends only on the path, the working directory and the display base, which are the key."""
    from renderer.load import yamlio

    try:
        key = (os.fspath(path), os.getcwd(), yamlio._DISPLAY_BASE.get())
    except OSError:  # no working directory: display_path says what it says
        return display_path(path)
    shown = _DISPLAYED.get(key)
    if shown is None:
        if len(_DISPLAYED) > 4096:
            _DISPLAYED.clear()
        shown = _DISPLAYED[key] = display_path(path)
    return shown


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def confine(raw: str, base_dir: Path, root: Path, where: Location | None, what: str, *,
            resolved: list[Resolution]) -> Path:
    """Resolve a repository-relative reference, refusing absolute paths, escapes and symlinks out; what
    it resolved (or failed to find) is added to ``resolved``, the overlay's record."""
    if not isinstance(raw, str) or not raw:
        raise fail("OVL-PATH", f"{what} must be a non-empty relative path", where)
    if "\0" in raw:
        raise fail("OVL-PATH", f"{what} {raw!r} holds a NUL character", where)
    try:
        encoded = os.fsencode(raw)
    except UnicodeEncodeError:  # a lone surrogate cannot name a file
        raise fail("OVL-PATH", f"{what} {raw!r} is not a valid file name", where) from None
    if len(encoded) > limits.MAX_PATH_LENGTH or any(len(part) > limits.MAX_PATH_COMPONENT
                                                     for part in encoded.split(b"/")):
        raise fail("OVL-PATH", f"{what} is too long (names up to {limits.MAX_PATH_COMPONENT} bytes, paths up to "
                               f"{limits.MAX_PATH_LENGTH})", where)
    if os.path.isabs(raw):
        raise fail("OVL-PATH", f"{what} {raw!r} must be relative to the file that names it", where)
    lexical = Path(os.path.normpath(base_dir / raw))
    real_root = root.resolve()
    if not _inside(lexical, root) and not _inside(lexical, real_root):
        raise fail("OVL-PATH", f"{what} {raw!r} points outside the overlay repository {root}", where)
    try:
        real = lexical.resolve(strict=True)
    except FileNotFoundError:
        _record(resolved, lexical, None)
        raise fail("OVL-PATH", f"{what} {raw!r} does not exist", where) from None
    except RuntimeError:  # Python < 3.13 reports a symlink loop so
        raise fail("OVL-PATH", f"{what} {raw!r} is a symlink loop", where) from None
    except OSError as exc:
        reason = "is a symlink loop" if exc.errno == errno.ELOOP else f"cannot be resolved: {exc.strerror or exc}"
        raise fail("OVL-PATH", f"{what} {raw!r} {reason}", where) from None
    _record(resolved, lexical, real)
    if not _inside(real, real_root):
        raise fail("OVL-PATH", f"{what} {raw!r} resolves (through a symlink) outside the overlay repository", where)
    mode = os.stat(real).st_mode
    if not stat.S_ISREG(mode):
        raise fail("OVL-PATH", f"{what} {raw!r} {describe_file_type(mode)}, not a YAML file", where)
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


def _subtree_paths(value: Any, path: Path_) -> list[Path_]:
    """``path`` and every path below it in ``value``, with the key-position entries of mappings."""
    out: list[Path_] = []
    stack: list[tuple[Any, Path_]] = [(value, path)]
    while stack:
        node, here = stack.pop()
        out.append(here)
        out.append(here + (KEY,))
        if isinstance(node, dict):
            stack.extend((v, here + (k,)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, here + (i,)) for i, v in enumerate(node))
    return out


def _drop_locs(locs: Locations, path: Path_, old: Any) -> None:
    """Forget the positions of ``path`` (which held ``old``) and everything below it.

    Walks the value rather than scanning every position: merging stays linear in the input
    (a scan per key made two 100,000-key layers take hours).
    """
    if old is not None or path in locs:
        for key in _subtree_paths(old, path):
            locs.pop(key, None)


def _merged_key(raw_key: str, value: Any) -> str:
    """The key a layer's ``raw_key`` names in the merged overlay (``key+`` on a list appends to ``key``)."""
    return raw_key[:-1] if raw_key.endswith(APPEND_SUFFIX) and isinstance(value, list) else raw_key


def _fresh(value: Any, locs: Locations, layer_locs: Locations, there: Path_, here: Path_) -> Any:
    """A copy of a layer's ``value`` (at ``there``) new to the merge at ``here``, each position recorded
    under its merged path. Its mappings follow the merge rules as if merged into an empty one, so a
    later layer's ``key+`` finds the list this one set: ``key+`` is ``key``, and ``key`` then ``key+``
    in one mapping append as across layers. A ``null`` inside is kept (a Helm value may mean it)."""
    for at, to in ((there, here), (there + (KEY,), here + (KEY,))):
        loc = layer_locs.get(at)
        if loc is not None:
            locs[to] = loc
        else:
            locs.pop(to, None)
    if isinstance(value, list):
        return [_fresh(v, locs, layer_locs, there + (i,), here + (i,)) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for raw_key, v in value.items():
        key = _merged_key(raw_key, v)
        current = out.get(key)
        if key != raw_key and isinstance(current, list):
            n = len(current)
            current += [_fresh(x, locs, layer_locs, there + (raw_key, i), here + (key, n + i)) for i, x in enumerate(v)]
            continue
        _drop_locs(locs, here + (key,), current)
        out[key] = _fresh(v, locs, layer_locs, there + (raw_key,), here + (key,))
    return out


def merge_layer(base: dict[str, Any], locs: Locations, layer: dict[str, Any], layer_locs: Locations,
                path: Path_ = (), layer_path: Path_ = ()) -> None:
    """Merge ``layer`` into ``base`` in place (see the module docstring for the rules)."""
    for raw_key, value in layer.items():
        key = _merged_key(raw_key, value)
        append = key != raw_key
        here, there = path + (key,), layer_path + (raw_key,)
        current = base.get(key)
        if value is None:
            base.pop(key, None)
            _drop_locs(locs, here, current)
            continue
        if append:
            start = len(current) if isinstance(current, list) else 0
            if not isinstance(current, list):
                _drop_locs(locs, here, current)
            if there in layer_locs:
                locs.setdefault(here, layer_locs[there])
            if (there + (KEY,)) in layer_locs:
                locs.setdefault(here + (KEY,), layer_locs[there + (KEY,)])
            base[key] = (list(current) if isinstance(current, list) else []) + [
                _fresh(item, locs, layer_locs, there + (i,), here + (start + i,)) for i, item in enumerate(value)]
        elif isinstance(value, dict) and isinstance(current, dict):
            merge_layer(current, locs, value, layer_locs, here, there)
        else:
            _drop_locs(locs, here, current)
            base[key] = _fresh(value, locs, layer_locs, there, here)


def _load_layer(path: Path, root: Path) -> tuple[dict[str, Any], Locations, str]:
    from renderer.load.layercache import parsed_layer

    display = displayed(path)
    # Shared bases parse once per process (renderer.load.layercache); the file is still read, and its bytes
    # and nodes still charged to this render's budget, on every use.
    data, locs = parsed_layer(display, read_text(path, display), _parse_layer, _nodes_left,
                              lambda cost: _charge_nodes(cost, display))
    return data, locs, display


def _nodes_left() -> int:
    return limits.current().nodes


def _charge_nodes(cost: int, display: str) -> None:
    """A layer served from the cache costs this render the nodes its parse cost."""
    budget = limits.current()
    budget.nodes -= cost
    if budget.nodes < 0:
        raise fail("OVL-LIMIT", f"the render's inputs expand to more than {limits.MAX_NODES} nodes "
                                "(YAML aliases or << merges)", Location(display, 1, 1))


def _parse_layer(text: str, display: str) -> tuple[dict[str, Any], Locations]:
    docs = load_documents(text, display, max_documents=1)
    if len(docs) != 1 or not isinstance(docs[0][0], dict):
        raise fail("OVL-SCHEMA", "an overlay file holds exactly one YAML mapping", Location(display, 1, 1))
    data, locs = docs[0]
    if "inherits" + APPEND_SUFFIX in data:
        # A layer's inherits is its own list, never merged with another's, so there is nothing to append
        # to; silently ignoring it would drop the layers it names.
        raise fail("OVL-SCHEMA", "inherits+ is not supported: inherits lists this layer's own bases "
                                 "(write inherits:)", locs.get(("inherits" + APPEND_SUFFIX, KEY)))
    from renderer.load import overlay_schema

    overlay_schema.validate_layer(_as_schema_sees_it(data), locs, display)
    return data, locs


def load_overlay(path: Path, root: Path | None = None, extra_vars: dict[str, str] | None = None) -> Overlay:
    """Load one cluster; this starts the render: a fresh budget (``renderer.load.limits``) and path record."""
    limits.start()
    resolved: list[Resolution] = []
    cluster_file = find_cluster_file(path)
    named = Path(os.path.abspath(cluster_file))
    try:
        st = os.stat(cluster_file)
    except (OSError, ValueError) as exc:
        _record(resolved, named, None)
        reason = "a symlink loop" if isinstance(exc, OSError) and exc.errno == errno.ELOOP else "nothing there"
        raise fail("OVL-PATH", f"no overlay at {path} (expected a cluster directory or its {CLUSTER_FILE}; "
                               f"found {reason})", Location(display_path(path))) from None
    if not stat.S_ISREG(st.st_mode):
        raise fail("OVL-PATH", f"{display_path(cluster_file)} {describe_file_type(st.st_mode)}, not a YAML file",
                   Location(display_path(cluster_file)))
    named_root = root or find_root(cluster_file)
    try:
        root = named_root.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): issue 34 item 2
        raise fail("OVL-PATH", f"the repository root {display_path(named_root)} is a symlink loop",
                   Location(display_path(named_root))) from None
    cluster_file = cluster_file.resolve()
    _record(resolved, named, cluster_file)
    if not _inside(cluster_file, root):
        raise fail("OVL-PATH", f"overlay is outside the repository root {root}", Location(display_path(cluster_file)))

    merged: dict[str, Any] = {}
    locs: Locations = {}
    applied: list[Path] = []
    stack: list[Path] = []
    # Membership by set: a list scan per inherits entry was quadratic in the layers (issue 25 item 3).
    applied_set: set[Path] = set()
    on_stack: set[Path] = set()

    def apply(file: Path, via: Location | None) -> None:
        if file in on_stack:
            chain = " -> ".join(display_path(p) for p in [*stack[stack.index(file):], file])
            raise fail("OVL-INHERIT", f"inherits cycle: {chain}", via)
        if file in applied_set:
            return  # a diamond: a shared base is applied once, at its first position
        if len(stack) >= limits.MAX_INHERITS_DEPTH:
            raise fail("OVL-INHERIT", f"inherits chain is deeper than {limits.MAX_INHERITS_DEPTH} layers", via)
        stack.append(file)
        on_stack.add(file)
        data, layer_locs, _display = _load_layer(file, root)
        for i, raw in enumerate(data.get("inherits") or []):
            where = layer_locs.get(("inherits", i))
            apply(confine(raw, file.parent, root, where, "inherits entry", resolved=resolved), where)
        on_stack.discard(stack.pop())
        applied.append(file)
        applied_set.add(file)
        layer = {k: v for k, v in data.items() if k != "inherits"}
        if file != cluster_file:
            layer.pop("metadata", None)  # a base layer does not name the cluster
        merge_layer(merged, locs, layer, layer_locs)

    try:
        apply(cluster_file, None)
    finally:
        # ``apply`` names itself (it recurses): a cycle that would keep this render's layers alive until
        # the garbage collector runs. Broken here, everything is freed by reference counting (issue 24).
        apply = None  # type: ignore[assignment]
    if extra_vars:
        merged.setdefault("vars", {}).update(extra_vars)
    display = displayed(cluster_file)
    from renderer.load import overlay_schema

    overlay_schema.validate_merged(merged, locs, display)

    name = merged["metadata"]["name"]
    dir_name = cluster_file.parent.name
    if name != dir_name:
        raise fail("OVL-NAME", f"metadata.name {name!r} must equal the cluster directory name {dir_name!r}",
                   locs.get(("metadata", "name")))
    _integers(merged)
    overlay = Overlay(name, merged, locs, root, cluster_file, applied, resolved)
    _apply_templates(overlay)
    return overlay


def _integers(data: Any) -> None:
    """``id: 100.0`` is a float YAML-wise and an integer JSON-Schema-wise (draft 6 on), so the editor
    schema accepts it; where the schema means an integer (a VLAN id, an MTU) the loader agrees and
    stores the integer, so the render is the bytes of ``id: 100`` (node-config writes link ``eno2.100``,
    never ``eno2.100.0``). A fractional value never gets here: the schema refused it."""
    floats: list[Path_] = []
    stack: list[tuple[Any, Path_]] = [(data, ())]
    while stack:
        node, here = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, here + (k,)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, here + (i,)) for i, v in enumerate(node))
        elif isinstance(node, float) and node.is_integer():
            floats.append(here)
    if not floats:
        return  # the usual case: no schema is loaded
    from renderer.load.overlay_schema import schema

    for here in floats:
        if _schema_type(schema(), here) == "integer":
            parent = data
            for key in here[:-1]:
                parent = parent[key]
            parent[here[-1]] = int(parent[here[-1]])


def _schema_type(node: Any, path: Path_) -> Any:
    for key in path:
        if not isinstance(node, dict):
            return None
        if isinstance(key, int):
            node = node.get("items")
        else:
            props = node.get("properties") or {}
            extra = node.get("additionalProperties")
            node = props.get(key, extra if isinstance(extra, dict) else None)
    return node.get("type") if isinstance(node, dict) else None


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
            from renderer.load import templating

            try:
                return templating.render_string(node, context)
            except templating.TemplateProblem as exc:
                findings.append(Finding("OVL-TEMPLATE", str(exc), overlay.locate(path)))
                return node
        return node

    try:
        for key in list(data):
            if key != "vars":
                data[key] = walk(data[key], (key,))
    finally:
        walk = None  # type: ignore[assignment]  # it recurses: a cycle through its own cell (see load_overlay)
    if findings:
        raise RenderError(findings)
