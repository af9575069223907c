"""``cozy-render explain``: which layer file and line set each value of the merged overlay, or, with
``--rendered``, the chain behind each value of the rendered output (``renderer.emit.provenance``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple

from renderer import report
from renderer.emit import provenance
from renderer.errors import EXIT_OK, EXIT_USAGE, Finding, RenderError
from renderer.escape import has_unsafe, json_text, printable
from renderer.load.overlay import load_overlay
from renderer.load.yamlio import KEY, display_path
from renderer.model import JSON_API_VERSION as OUTPUT_API
from renderer.pipeline import Options, refuse_tree
from renderer.pipeline import run as run_pipeline
from renderer.requests import ExplainRequest

if TYPE_CHECKING:
    from renderer.emit.provenance import Entry, Tracer
    from renderer.model import Emitted


def run(req: ExplainRequest) -> int:
    if req.rendered:
        return _rendered(req)

    refuse_tree(req.path)
    overlay = load_overlay(req.path, req.root)
    prefix = parse_key(req.key, overlay.data)
    if req.key and overlay.get(*prefix, default=KeyError) is KeyError:
        raise RenderError([Finding("CLI-EXPLAIN", f"{req.key} is not set in the merged overlay"
                                   + _rendered_hint(req.key), overlay.locate(()))])
    rows = []
    for path, loc in sorted(overlay.locs.items(), key=lambda kv: [str(x) for x in kv[0]]):
        if not path or KEY in path or path[: len(prefix)] != prefix:
            continue
        value = overlay.get(*path)
        if isinstance(value, (dict, list)):
            continue
        rows.append((path, value, loc))
    report.show("explain", req.fmt, Explained(overlay.name, [display_path(p) for p in overlay.layers], rows))
    return EXIT_OK


class Explained(NamedTuple):
    """``explain PATH [KEY]``: the cluster, its layers as printed, and (path, value, location) per value."""

    cluster: str
    layers: list[str]
    rows: list[tuple[tuple[str | int, ...], Any, Any]]


@report.reporter("explain", "json")
def _explain_json(explained: Explained, streams: report.Streams) -> None:
    streams.stdout.write(json_text({
        "apiVersion": OUTPUT_API, "kind": "Explanation", "cluster": explained.cluster, "layers": explained.layers,
        "values": [{"key": dotted_key(path), "pointer": to_pointer(path), "value": value, "file": loc.path,
                    "line": loc.line, "column": loc.col} for path, value, loc in explained.rows]}, indent=2) + "\n")


@report.reporter("explain", "text")
def _explain_text(explained: Explained, streams: report.Streams) -> None:
    out = [f"# layers, applied in order: {', '.join(explained.layers)}"]
    out += [f"{dotted_key(path)} = {json.dumps(value)}  # {loc}" for path, value, loc in explained.rows]
    streams.stdout.write("".join(printable(line) + "\n" for line in out))  # paths and keys are input: one line each


def _rendered_hint(key: str) -> str:
    if key.startswith("bundles.") or (key.startswith("gpu.") and "Variant" in key):
        return "; for a value the render derives, use --rendered (explain PATH --rendered KIND/NAME /json/pointer)"
    return "; --rendered explains the rendered output instead"


def _rendered(req: ExplainRequest) -> int:
    with provenance.collector_paused():  # one cluster, as pipeline.run renders it (renderer.batch)
        result = run_pipeline(req.path, Options(req.variants, req.root, refuse=False)).one()
    tracer = provenance.Tracer(result)
    target = req.key
    pointer = req.pointer
    if target and target.startswith("/") and pointer is None:
        target, pointer = None, target
    objects = [provenance.find_object(result, target)] if target else result.objects
    entries = []
    with provenance.collector_paused():
        for obj in objects:
            entries.extend(_object_entries(tracer, obj, target, pointer))
    if pointer is not None and not entries:
        raise RenderError([Finding("CLI-EXPLAIN", f"no rendered object has a value at {pointer}",
                                   result.overlay.locate(()))])
    report.show("explain-rendered", req.fmt, (entries, result.overlay.name))
    return EXIT_OK


def _object_entries(tracer: Tracer, obj: Emitted, target: str | None, pointer: str | None) -> list[Entry]:
    path = None
    if pointer is not None:
        path = provenance.from_pointer(obj.obj, pointer)
        if path is None:
            if target is None:
                return []
            raise RenderError([Finding("CLI-EXPLAIN", f"{provenance.object_ref(obj)} has no value at {pointer}",
                                       obj.source)])
    return tracer.entries(obj, path)


def format_entries(entries: list[Entry], fmt: str, cluster: str = "") -> str:
    """What ``explain --rendered -o FMT`` prints for ``entries`` (``render --annotate -o json`` embeds it)."""
    return report.shown("explain-rendered", fmt, (entries, cluster))


@report.reporter("explain-rendered", "json")
def _rendered_json(payload: tuple[list[Entry], str], streams: report.Streams) -> None:
    entries, cluster = payload
    streams.stdout.write(json_text({"apiVersion": OUTPUT_API, "kind": "Explanation", "cluster": cluster,
                                    "values": [e.as_dict() for e in entries]}, indent=2) + "\n")


@report.reporter("explain-rendered", "text")
def _rendered_text(payload: tuple[list[Entry], str], streams: report.Streams) -> None:
    entries, _ = payload
    out: list[str] = []
    current = None
    for e in entries:  # names, pointers and step texts hold input: each printed on its one line
        if e.ref != current:
            current = e.ref
            out.append(f"{'' if not out else chr(10)}# {printable(current)}\n")
        out.append(f"{printable(e.pointer or '/')} = {json.dumps(e.value)}\n")
        out += [f"    {printable(step.text)}\n" for step in e.steps]
    streams.stdout.write("".join(out))


def dotted_key(path: tuple[str | int, ...]) -> str:
    """The key explain prints and takes back (``parse_key`` reads it): parts joined by dots, list indexes
    as digits, and a part ``_plain`` cannot hold (a Package name such as ``cozystack.metallb``)
    double-quoted as a JSON string: ``packages."cozystack.metallb".variant``."""
    return ".".join(str(p) if isinstance(p, int) or _plain(p) else json.dumps(p) for p in path)


def _plain(part: str) -> bool:
    """Whether a mapping key reads back unquoted as itself: not empty, no dot or double quote (the
    syntax's own), not all digits (a list index), no leading ``/`` (a pointer), no leading or trailing
    space (a shell or a reader drops it), and nothing ``printable`` would escape (the printed line
    would no longer be the key; JSON's escapes are ASCII, so the quoted part survives)."""
    return (bool(part) and "." not in part and '"' not in part and not part.isdigit()
            and not part.startswith("/") and part == part.strip() and not has_unsafe(part))


def to_pointer(path: tuple[str | int, ...]) -> str:
    """RFC 6901: the other spelling explain takes (``/packages/cozystack.metallb/variant``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def parse_key(key: str | None, data: Any = None) -> tuple[str | int, ...]:
    """A key as overlay path parts, as ``dotted_key`` and ``to_pointer`` print them: a JSON pointer
    (``/vlans/0/id``), or dotted (``gpu.variant``, ``vlans.0.id``, ``packages."cozystack.metallb".variant``).
    Unquoted digits index lists; in a pointer, digits index a list where the overlay has one there."""
    if not key:
        return ()
    if key.startswith("/"):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in key[1:].split("/")]
        out: list[str | int] = []
        node = data
        for part in parts:
            index = isinstance(node, list) and part.isascii() and part.isdigit()
            out.append(int(part) if index else part)
            node = (node[int(part)] if index and int(part) < len(node) else
                    node.get(part) if isinstance(node, dict) else None)
        return tuple(out)
    return tuple(_dotted_parts(key))


def _dotted_parts(key: str) -> list[str | int]:
    parts: list[str | int] = []
    i = 0
    while i <= len(key):
        if key.startswith('"', i):
            end = i + 1
            while end < len(key) and key[end] != '"':
                end += 2 if key[end] == "\\" else 1
            try:
                parts.append(json.loads(key[i:end + 1]))
            except ValueError:
                raise RenderError([Finding("CLI-EXPLAIN", f"key {key!r}: unterminated quoted part; quote a part "
                                           'holding dots as packages."cozystack.metallb".variant')],
                                  EXIT_USAGE) from None
            i = end + 1
            if i < len(key) and key[i] != ".":
                raise RenderError([Finding("CLI-EXPLAIN", f"key {key!r}: a quoted part must be followed by '.'")],
                                  EXIT_USAGE)
            i += 1
            continue
        end = key.find(".", i)
        end = len(key) if end < 0 else end
        part = key[i:end]
        parts.append(int(part) if part.isascii() and part.isdigit() else part)
        i = end + 1
    return parts
