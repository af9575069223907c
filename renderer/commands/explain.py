"""``cozy-render explain``: which layer file and line set each value of the merged overlay."""

from __future__ import annotations

import json
import sys

from renderer.errors import EXIT_OK, Finding, RenderError
from renderer.requests import ExplainRequest


def run(req: ExplainRequest) -> int:
    from renderer.overlay import load_overlay
    from renderer.yamlio import KEY, display_path

    overlay = load_overlay(req.path, req.root)
    prefix = _key_path(req.key)
    if req.key and overlay.get(*prefix, default=KeyError) is KeyError:
        raise RenderError([Finding("CLI-EXPLAIN", f"{req.key} is not set in the merged overlay",
                                   overlay.locate(()))])
    out = [f"# layers, applied in order: {', '.join(display_path(p) for p in overlay.layers)}\n"]
    for path, loc in sorted(overlay.locs.items(), key=lambda kv: [str(x) for x in kv[0]]):
        if not path or KEY in path or path[: len(prefix)] != prefix:
            continue
        value = overlay.get(*path)
        if isinstance(value, (dict, list)):
            continue
        dotted = ".".join(str(p) for p in path)
        out.append(f"{dotted} = {json.dumps(value)}  # {loc}\n")
    sys.stdout.write("".join(out))
    return EXIT_OK


def _key_path(key: str | None) -> tuple[str | int, ...]:
    """A dotted key (``gpu.variant``, ``vlans.0.id``) as overlay path parts; digits index lists."""
    if not key:
        return ()
    return tuple(int(p) if p.isascii() and p.isdigit() else p for p in key.split("."))
