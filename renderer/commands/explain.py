"""``cozy-render explain``: which layer file and line set each value of the merged overlay, or, with
``--rendered``, the chain behind each value of the rendered output (``renderer.emit.provenance``)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from renderer.errors import EXIT_OK, Finding, RenderError
from renderer.requests import ExplainRequest

if TYPE_CHECKING:
    from renderer.emit.provenance import Entry


def run(req: ExplainRequest) -> int:
    if req.rendered:
        return _rendered(req)
    from renderer.load.overlay import load_overlay
    from renderer.load.yamlio import KEY, display_path
    from renderer.pipeline import refuse_tree

    refuse_tree(req.path)
    overlay = load_overlay(req.path, req.root)
    prefix = _key_path(req.key)
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
        rows.append((".".join(str(p) for p in path), value, loc))
    if req.fmt == "json":
        sys.stdout.write(json.dumps({
            "layers": [display_path(p) for p in overlay.layers],
            "values": [{"key": key, "value": value, "file": loc.path, "line": loc.line, "col": loc.col}
                       for key, value, loc in rows]}, indent=2) + "\n")
        return EXIT_OK
    out = [f"# layers, applied in order: {', '.join(display_path(p) for p in overlay.layers)}\n"]
    out += [f"{key} = {json.dumps(value)}  # {loc}\n" for key, value, loc in rows]
    sys.stdout.write("".join(out))
    return EXIT_OK


def _rendered_hint(key: str) -> str:
    if key.startswith("bundles.") or (key.startswith("gpu.") and "Variant" in key):
        return "; for a value the render derives, use --rendered (explain PATH --rendered KIND/NAME /json/pointer)"
    return "; --rendered explains the rendered output instead"


def _rendered(req: ExplainRequest) -> int:
    from renderer.emit import provenance
    from renderer.pipeline import render

    result = render(req.path, root=req.root, variants=req.variants, refuse=False)
    tracer = provenance.Tracer(result)
    target = req.key
    pointer = req.pointer
    if target and target.startswith("/") and pointer is None:
        target, pointer = None, target
    objects = [provenance.find_object(result, target)] if target else result.objects
    entries = []
    for obj in objects:
        path = None
        if pointer is not None:
            path = provenance.from_pointer(obj.obj, pointer)
            if path is None:
                if target is None:
                    continue
                raise RenderError([Finding("CLI-EXPLAIN", f"{provenance.object_ref(obj)} has no value at {pointer}",
                                           obj.source)])
        entries.extend(tracer.entries(obj, path))
    if pointer is not None and not entries:
        raise RenderError([Finding("CLI-EXPLAIN", f"no rendered object has a value at {pointer}",
                                   result.overlay.locate(()))])
    sys.stdout.write(format_entries(entries, req.fmt))
    return EXIT_OK


def format_entries(entries: list[Entry], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"values": [e.as_dict() for e in entries]}, indent=2) + "\n"
    out: list[str] = []
    current = None
    for e in entries:
        if e.ref != current:
            current = e.ref
            out.append(f"{'' if not out else chr(10)}# {current}\n")
        out.append(f"{e.pointer or '/'} = {json.dumps(e.value)}\n")
        out += [f"    {step.text}\n" for step in e.steps]
    return "".join(out)


def _key_path(key: str | None) -> tuple[str | int, ...]:
    """A dotted key (``gpu.variant``, ``vlans.0.id``) as overlay path parts; digits index lists."""
    if not key:
        return ()
    return tuple(int(p) if p.isascii() and p.isdigit() else p for p in key.split("."))
