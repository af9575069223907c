"""Where every rendered value came from: ``cozy-render explain --rendered`` and ``render --annotate``.

For each leaf value of each emitted object (a scalar, or an empty list or mapping) the chain is built
from what the stages already record:

- a manifest read from a file (``Emitted.locs``): the file, line and column of the value;
- a value copied from the overlay (``Emitted.origins``, a forwarded ``Derived.copied_from``): every
  layer that wrote the key, in the order the layers apply, the last one winning, and the ``vars``
  a template in it read;
- a value a feature derived (``Emitted.derived``, ``Plan.derived``): the feature, the variant data
  file and line it was copied from (positions are read from the YAML file only here: the variants
  bundle has none), and the overlay value that chose the route (``gpu.variant: vgpu``);
- a name a feature added to ``bundles.enabledPackages``/``disabledPackages``: the overlay value that
  asked for it;
- what emit stamps on every object (labels, the Package envelope): the renderer, with the overlay
  value it was taken from where there is one.

Nothing here runs on ``render``'s normal path.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from ruamel.yaml import YAML
from ruamel.yaml.events import (
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    MappingStartEvent,
    ScalarEvent,
)

from renderer.emit import PLATFORM_VALUES, RenderResult
from renderer.errors import Finding, Location, RenderError
from renderer.escape import printable
from renderer.load import limits
from renderer.load.layercache import parsed_layer
from renderer.load.overlay import APPEND_SUFFIX, Overlay
from renderer.load.yamlio import KEY, Locations, Path_, display_path, go_resolve, load_documents, read_text
from renderer.model import CLUSTER_LABEL, MANAGED_BY_LABEL, Derived, Emitted
from renderer.tree import dig

_PACKAGE_LISTS = ("enabledPackages", "disabledPackages")
_TEMPLATE_VAR = re.compile(r"\bvars\.([A-Za-z_][A-Za-z0-9_]*)")


class Step(NamedTuple):
    """One link of a value's chain."""

    kind: str  # layer | template-var | manifest | feature | variant | route | renderer
    text: str  # what a person reads
    location: Location | None = None
    key: str | None = None  # dotted overlay key, where the step is an overlay value
    value: Any = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.key is not None:
            out["key"] = self.key
        if self.kind in ("layer", "route", "template-var"):
            out["value"] = self.value
        if self.location is not None:
            out["file"] = self.location.path
            if self.location.line:
                out["line"] = self.location.line
                out["column"] = self.location.col
        return out


class Entry(NamedTuple):
    """The provenance of one rendered value."""

    obj: Emitted
    path: Path_
    value: Any
    steps: tuple[Step, ...]

    @property
    def ref(self) -> str:
        return object_ref(self.obj)

    @property
    def pointer(self) -> str:
        return to_pointer(self.path)

    def primary(self) -> Location | None:
        """The one place a ``# file:line`` comment names: the last file step (winning layer, variant
        line, manifest line), else the route that chose it."""
        for kinds in (("layer", "manifest", "variant"), ("route",), ("renderer",)):
            found = [s.location for s in self.steps if s.kind in kinds and s.location is not None]
            if found:
                return found[-1] if kinds[0] == "layer" else found[0]
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"object": self.ref, "pointer": self.pointer, "value": self.value,
                "provenance": [s.as_dict() for s in self.steps]}


def object_ref(e: Emitted) -> str:
    return f"{e.kind}/{e.namespace}/{e.name}" if e.namespace else f"{e.kind}/{e.name}"


def to_pointer(path: Path_) -> str:
    """RFC 6901 JSON pointer of an object path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def from_pointer(obj: Any, pointer: str) -> Path_ | None:
    """The object path a JSON pointer names (list indexes as ints), or None when nothing is there."""
    if pointer in ("", "/"):
        return ()
    if not pointer.startswith("/"):
        return None
    path: list[Any] = []
    node = obj
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
            path.append(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            path.append(int(part))
        else:
            return None
    return tuple(path)


def leaves(node: Any, path: Path_ = ()) -> list[tuple[Path_, Any]]:
    """Every leaf of a tree (scalars, empty lists and mappings), in document order."""
    if isinstance(node, dict) and node:
        return [leaf for k, v in node.items() for leaf in leaves(v, path + (k,))]
    if isinstance(node, list) and node:
        return [leaf for i, v in enumerate(node) for leaf in leaves(v, path + (i,))]
    return [(path, node)]


def dotted(path: Path_) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class Tracer:
    """Builds entries for one render result; layer files and variant files are read once each."""

    def __init__(self, result: RenderResult) -> None:
        self.result = result
        self.overlay: Overlay = result.overlay
        self._reverse: dict[Location, Path_] | None = None

    # -- entry points -------------------------------------------------------------------------------
    def entries(self, obj: Emitted | None = None, path: Path_ | None = None) -> list[Entry]:
        out = []
        for e in [obj] if obj is not None else self.result.objects:
            base = () if path is None else path
            for leaf_path, value in leaves(dig(e.obj, *base, default=KeyError), base):
                out.append(Entry(e, leaf_path, value, tuple(self.trace(e, leaf_path, value))))
        return out

    def trace(self, e: Emitted, path: Path_, value: Any) -> list[Step]:
        stamped = self._stamped(e, path)
        if stamped:
            return stamped  # the same origin on every object, a manifests: file's too (issue 23)
        if e.locs is not None:
            loc = e.locate(path, self.overlay)
            steps = [Step("manifest", f"manifest file {loc}" if loc else "manifest file", loc)]
            for d in e.derived:
                if d.route is not None:
                    entry = self.overlay.locate(d.route)
                    steps.append(Step("route", f"listed in {dotted(d.route)}" + (f" at {entry}" if entry else ""),
                                      entry, dotted(d.route), self.overlay.get(*d.route)))
            return steps
        listed = self._package_list_item(e, path, value)
        if listed:
            return listed
        origin = self._origin(e, path, value)
        derived = self._derived(e, path)
        if origin is not None:
            n, mapped, forwarded = origin
            computed = self.overlay.get(*mapped, default=KeyError) != value
            if derived is not None and (len(derived.prefix) > n or (computed and (
                    len(derived.prefix) == n or derived.variant_file is not None))):
                # variant data maps the overlay value to this one (platform.variant -> a networking variant)
                steps = self._derived_steps(derived, path, value)
                if computed and tuple(mapped) != derived.route:
                    source = self.route_step(mapped)
                    steps.append(source._replace(text="from " + source.text.removeprefix("chosen by ")))
                return steps
            steps = self.overlay_chain(mapped)
            by = forwarded or derived
            if forwarded is not None and not computed:
                steps.append(Step("feature", f"forwarded by feature {forwarded.feature}"
                                  + (f" ({forwarded.note})" if forwarded.note else "")))
            elif computed:
                steps.append(Step("feature" if by else "renderer",
                                  f"computed from it by {'feature ' + by.feature if by else 'cozy-render'}"))
            return steps
        if derived is not None:
            return self._derived_steps(derived, path, value)
        return self._fallback(e, path)

    # -- overlay values, layer by layer ------------------------------------------------------------
    def overlay_chain(self, overlay_path: Path_) -> list[Step]:
        steps: list[Step] = []
        key = dotted(overlay_path)
        winner = self.overlay.locs.get(overlay_path)
        for layer in self.overlay.layers:
            found = _layer_value(layer, overlay_path)
            if found is None:
                continue
            raw, loc = found
            verb = "set" if not steps else "overridden"
            steps.append(Step("layer", f"{key} {verb} in {loc}", loc, key, raw))
            if isinstance(raw, str):
                for var in dict.fromkeys(_TEMPLATE_VAR.findall(raw)):
                    var_loc = self.overlay.locs.get(("vars", var))
                    var_value = self.overlay.get("vars", var)
                    steps.append(Step("template-var", f"template reads vars.{var} = {var_value!r}"
                                      + (f" at {var_loc}" if var_loc else " (a parameter)"), var_loc,
                                      f"vars.{var}", var_value))
        if winner is not None and not any(s.location == winner for s in steps if s.kind == "layer"):
            # a list item (indexes shift under `key+`) or a value whose layer could not be re-read
            steps.append(Step("layer", f"{key} set in {winner}", winner, key, self.overlay.get(*overlay_path)))
        return steps

    def _origin(self, e: Emitted, path: Path_, value: Any) -> tuple[int, Path_, Derived | None] | None:
        """The longest origin whose overlay path holds exactly this value (and the forwarding feature)."""
        best: tuple[tuple[int, bool], Path_, Derived | None] | None = None
        candidates: list[tuple[Path_, Path_, Derived | None]] = [(p, o, None) for p, o in e.origins]
        candidates += [(d.prefix, d.copied_from, d) for d in e.derived if d.copied_from is not None]
        for prefix, overlay_prefix, forwarded in candidates:
            n = len(prefix)
            if tuple(path[:n]) != tuple(prefix):
                continue
            mapped = tuple(overlay_prefix) + tuple(path[n:])
            if mapped not in self.overlay.locs:
                continue
            equal = self.overlay.get(*mapped, default=KeyError) == value
            # An origin naming this very value may transform it (an endpoint parsed into a host);
            # a wider one must hold the same value, or the value came from elsewhere (variant data).
            # Longest first; at one length, a source holding the very value beats one transformed.
            if (equal or n == len(path)) and (best is None or (n, equal) > best[0]):
                best = ((n, equal), mapped, forwarded)
        return (best[0][0], best[1], best[2]) if best is not None else None

    # -- derived values ------------------------------------------------------------------------------
    def _derived(self, e: Emitted, path: Path_) -> Derived | None:
        best = None
        for d in e.derived:
            if d.copied_from is None and tuple(path[: len(d.prefix)]) == d.prefix \
                    and (best is None or len(d.prefix) > len(best.prefix)):
                best = d
        return best

    def _derived_steps(self, d: Derived, path: Path_, value: Any) -> list[Step]:
        steps = [Step("feature", f"derived by feature {d.feature}" + (f" ({d.note})" if d.note else ""))]
        if d.variant_file is not None:
            rest = tuple(path[len(d.prefix):])
            loc = self.variant_location(d.variant_file, d.variant_path + rest)
            steps.append(Step("variant", f"variant data {loc}", loc))
        if d.route is not None:
            steps.append(self.route_step(d.route))
        return steps

    def route_step(self, route: Path_) -> Step:
        loc = self.overlay.locate(route)
        value = self.overlay.get(*route)
        key = dotted(route)
        where = f" at {loc}" if loc else ""
        shown = "{...}" if isinstance(value, dict) else "[...]" if isinstance(value, list) else json.dumps(value)
        return Step("route", f"chosen by {key}: {shown}{where}", loc, key, value)

    def variant_location(self, relpath: str, doc_path: Path_) -> Location | None:
        variants = self.result.variants
        user = variants.override / relpath if variants.override is not None else None
        if user is not None and user.is_file():
            file, display = user, display_path(user)
        else:
            file, display = variants.shipped / relpath, f"variants/{relpath}"  # the shipped data, by its name
        docs = _variant_positions(str(file), display)
        if not doc_path or not isinstance(doc_path[0], int) or doc_path[0] >= len(docs):
            return Location(display)
        locs = docs[doc_path[0]]
        inner = tuple(doc_path[1:])
        while inner not in locs and inner:
            inner = inner[:-1]
        return locs.get(inner) or Location(display, 1, 1)

    # -- package lists, emit stamps, fallback ------------------------------------------------------
    def _package_list_item(self, e: Emitted, path: Path_, value: Any) -> list[Step]:
        n = len(PLATFORM_VALUES)
        if e.role != "platform" or tuple(path[:n]) != PLATFORM_VALUES or len(path) != n + 3 \
                or path[n] != "bundles" or path[n + 1] not in _PACKAGE_LISTS:
            return []
        steps: list[Step] = []
        position = self._list_positions(path[n + 1]).get(value) if isinstance(value, str) else None
        if position is not None:
            steps += self.overlay_chain(("platform", "values", "bundles", path[n + 1], position))
        plan = self.result.plan
        asked = (plan.enabled_packages if path[n + 1] == "enabledPackages" else plan.disabled_packages).get(value)
        if value in (plan.enabled_packages if path[n + 1] == "enabledPackages" else plan.disabled_packages):
            route = self._path_of(asked)
            feature = str(route[0]) if route else "?"
            steps.append(Step("feature", f"added to bundles.{path[n + 1]} by feature {feature} (sorted, unique)"))
            if route:
                steps.append(self.route_step(route))
        return steps

    def _list_positions(self, key: str) -> dict[str, int]:
        """Where each name first appears in the overlay's bundles.<key>, built once (a list.index per
        value was quadratic in the list: issue 25 item 3)."""
        cache: dict[str, dict[str, int]] = self.__dict__.setdefault("_positions", {})
        if key not in cache:
            listed = self.overlay.get("platform", "values", "bundles", key)
            positions: dict[str, int] = {}
            for i, name in enumerate(listed if isinstance(listed, list) else []):
                if isinstance(name, str):
                    positions.setdefault(name, i)
            cache[key] = positions
        return cache[key]

    def _stamped(self, e: Emitted, path: Path_) -> list[Step]:
        if path == ("metadata", "labels", MANAGED_BY_LABEL):
            return [Step("renderer", "label stamped by cozy-render on every object it owns")]
        if path == ("metadata", "labels", CLUSTER_LABEL):
            loc = self.overlay.locs.get(("metadata", "name"))
            return [Step("renderer", "cluster label stamped by cozy-render on every object"),
                    Step("route", f"from metadata.name: {self.overlay.name}" + (f" at {loc}" if loc else ""),
                         loc, "metadata.name", self.overlay.name)]
        return []

    def _fallback(self, e: Emitted, path: Path_) -> list[Step]:
        """Written by emit around overlay data: the envelope, a Package's name (the ``packages:`` key),
        annotations PLT-11 requires."""
        best: tuple[int, Path_] | None = None
        for prefix, overlay_prefix in e.origins:
            n = len(prefix)
            if tuple(path[:n]) == tuple(prefix) and (best is None or n > best[0]):
                best = (n, tuple(overlay_prefix))
        loc = self.overlay.locate(best[1]) if best is not None else e.source
        what = f"overlay {dotted(best[1])}" if best is not None and best[1] else "the overlay"
        key_loc = self.overlay.locs.get(("packages", e.name, KEY))
        if path == ("metadata", "name") and key_loc is not None:
            return [Step("layer", f"the key of packages.{e.name} at {key_loc}", key_loc, f"packages.{e.name}", e.name)]
        if e.role == "package" and path[:2] == ("metadata", "annotations"):
            text = "patch annotations stamped by cozy-render (PLT-11: applied after the platform, never pruned)"
        else:
            text = f"written by cozy-render for {what}"
        return [Step("renderer", text + (f" at {loc}" if loc else ""), loc)]

    def _path_of(self, loc: Location | None) -> Path_ | None:
        if loc is None:
            return None
        if self._reverse is None:
            self._reverse = {}
            for p, where in sorted(self.overlay.locs.items(), key=lambda kv: len(kv[0])):
                if KEY not in p:
                    self._reverse[where] = p
        return self._reverse.get(loc)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Automatic garbage collection paused while provenance is built, the young generations collected
    after. Tracing allocates an entry per rendered value on top of the live render result, and
    CPython's full collections kept re-walking that heap: 100x the ``enabledPackages`` cost 130-180x
    (bench/bench_growth.py, issue 25 item 3). What tracing builds is acyclic, freed by reference
    counting; the few cycles a YAML parser leaves are collected on the way out (as renderer.batch does)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.collect(1)
            gc.enable()


class _NotParsed(Exception):
    pass


def _not_parsed(_text: str, _display: str) -> tuple[Any, Locations]:
    raise _NotParsed  # nothing is added to the render's layer cache from here


@cache  # every layer once: a bounded cache re-parsed layers per value (1,000 layers)
def _layer_document(path: Path) -> tuple[Any, Locations]:
    """The layer as the render parsed it (renderer.load.layercache: re-parsing a 1 MB layer with positions
    was the largest part of ``--annotate``), else parsed again within the spent budget."""
    display = display_path(path)
    with limits.rereading():  # the render accepted this layer; its budget (files, bytes, nodes) is spent
        text = read_text(path, display)
        try:
            return parsed_layer(display, text, _not_parsed)
        except _NotParsed:
            pass
        data, locs = load_documents(text, display)[0]
    return data, locs


def _layer_value(layer: Path, overlay_path: Path_) -> tuple[Any, Location] | None:
    """The raw value and position of ``overlay_path`` in one layer file (``key+`` counts as ``key``)."""
    data, locs = _layer_document(layer)
    node: Any = data
    raw_path: list[Any] = []
    for part in overlay_path:
        if isinstance(node, dict):
            if part in node:
                raw_path.append(part)
                node = node[part]
            elif isinstance(part, str) and part + APPEND_SUFFIX in node:
                raw_path.append(part + APPEND_SUFFIX)
                node = node[part + APPEND_SUFFIX]
            else:
                return None
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            raw_path.append(part)
            node = node[part]
        else:
            return None
    if node is None:
        return None  # `key: null` deletes, it does not set
    loc = locs.get(tuple(raw_path))
    return (node, loc) if loc is not None else None


@lru_cache(maxsize=64)
def _variant_positions(file: str, display: str) -> list[Locations]:
    with limits.rereading():
        return [locs for _, locs in load_documents(read_text(Path(file), display), display)]


def find_object(result: RenderResult, ref: str) -> Emitted:
    """``KIND/NAME`` or ``KIND/NAMESPACE/NAME`` (kind case-insensitive)."""
    parts = ref.split("/")
    for e in result.objects:
        if len(parts) == 2 and e.kind.lower() == parts[0].lower() and e.name == parts[1]:
            return e
        if len(parts) == 3 and e.kind.lower() == parts[0].lower() and (e.namespace, e.name) == (parts[1], parts[2]):
            return e
    known = ", ".join(object_ref(e) for e in result.objects)
    raise RenderError([Finding("CLI-EXPLAIN", f"no object {ref} in the rendered output (rendered: {known})",
                               result.overlay.locate(()))])


def comment_for(entry: Entry) -> str:
    """``file:line`` for a YAML comment: a file name cannot end the comment and inject YAML (issue 25 item 10)."""
    loc = entry.primary()
    if loc is None:
        return "cozy-render"
    return f"{_comment_path(loc.path)}:{loc.line}" if loc.line else _comment_path(loc.path)


@lru_cache(maxsize=1024)
def _comment_path(path: str) -> str:
    return printable(path)


def annotate(stream: str, results: list[RenderResult]) -> str:
    """The YAML stream ``stream`` (``output.to_yaml`` of every result's objects, in order) with a
    trailing ``# file:line`` comment on the line of each value. Only comments are added, so any
    YAML reader (``kubectl kustomize``) reads the same objects."""
    with collector_paused():
        return _annotate(stream, results)


def _annotate(stream: str, results: list[RenderResult]) -> str:
    objects = [(r, e) for r in results for e in r.objects]
    documents, ends = _stream_lines(stream)
    if len(documents) != len(objects):  # pragma: no cover - both come from the same objects
        raise AssertionError("stream and objects disagree")
    lines = stream.split("\n")
    comments: dict[int, str] = {}
    tracers: dict[int, Tracer] = {}
    for (result, e), positions in zip(objects, documents, strict=True):
        tracer = tracers.setdefault(id(result), Tracer(result))
        for entry in tracer.entries(e):
            line = positions.get(entry.path)
            if line is not None:
                comments.setdefault(ends.get(line, line), comment_for(entry))
    for index, comment in comments.items():
        lines[index] = f"{lines[index]}  # {comment}"
    return "\n".join(lines)


def _stream_lines(stream: str) -> tuple[list[dict[Path_, int]], dict[int, int]]:
    """For each document of our own YAML stream, the line (0-based) each value starts on, by object path;
    and first line -> last line of every plain or quoted scalar spread over several lines.

    One pass over the parser's events, no node graph: re-composing the stream with positions was most
    of ``--annotate``'s cost and memory. Keys are read as kubectl reads them (YAML 1.1, ``go_resolve``),
    the same as the objects' own keys.

    A string over the emitter's 4,096-character width is folded, and a comment after its first line
    would land inside the quoted value or break the plain one (issue 25 item 7): the comment goes after
    its last line, where it is YAML's. Block scalars (``|``, ``>``) take the comment on their indicator
    line."""
    documents: list[dict[Path_, int]] = []
    ends: dict[int, int] = {}
    lines: dict[Path_, int] = {}
    # one frame per open collection: [path, next index or None for a mapping, pending key, expecting a key]
    stack: list[list[Any]] = []
    for event in YAML(typ="safe").parse(stream):
        if isinstance(event, ScalarEvent):
            first = event.start_mark.line
            if event.style not in ("|", ">"):
                mark = event.end_mark
                last = mark.line if mark.column else mark.line - 1
                if last > first:
                    ends[first] = last
            if stack and stack[-1][1] is None and stack[-1][3]:  # a mapping key
                frame = stack[-1]
                frame[2] = go_resolve(event.value) if not event.style and event.value else event.value
                frame[3] = False
                continue
            lines[_next_path(stack)] = first
        elif isinstance(event, CollectionStartEvent):
            path = _next_path(stack)
            lines[path] = event.start_mark.line
            stack.append([path, None if isinstance(event, MappingStartEvent) else 0, None, True])
        elif isinstance(event, CollectionEndEvent):
            stack.pop()
        elif isinstance(event, DocumentStartEvent):
            lines = {}
            documents.append(lines)
            stack = []
    return [d for d in documents if d], ends


def _next_path(stack: list[list[Any]]) -> Path_:
    """The path of the value that comes next, advancing its collection's frame."""
    if not stack:
        return ()
    frame = stack[-1]
    if frame[1] is None:
        frame[3] = True
        return (*frame[0], frame[2])
    frame[1] += 1
    return (*frame[0], frame[1] - 1)


def entries_of(results: list[RenderResult]) -> list[Entry]:
    with collector_paused():
        return [entry for r in results for entry in Tracer(r).entries()]
