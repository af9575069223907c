"""Parsed overlay layers, shared by every cluster one process renders.

A fleet's clusters inherit the same few base layers; ``render --all`` of 300 clusters parsed and
validated them 686 times. This keeps the parsed, schema-checked result of each layer for the life of
the process, keyed by the file's displayed name and its full text as read from disk for this
render: a layer edited during a run (same name, new bytes) is a new key and is parsed and validated
afresh; an mtime or size is never trusted. Only layers that loaded without error are kept; a layer
that fails fails again every time it is read. Callers get their own copy of the data and positions,
so no render can change what the next one sees. The cache holds the most recently used layers
(``MAX_LAYERS``), so clusters' own files, each read once, do not push the shared bases out for long.

A per-render work budget that parsing charges (nodes built, say) must be charged on a hit as well, or
a cluster would be allowed more in a fleet run than alone: pass ``spent`` (what is left of the budget
now) and ``charge`` (take that much off it, refusing when it runs out); the cost measured while the
layer was parsed is kept with the entry and charged again on every hit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from renderer.load.yamlio import Locations
from renderer.tree import copy_tree

MAX_LAYERS = 64

Parsed = tuple[dict[str, Any], Locations]
_layers: OrderedDict[tuple[str, str], tuple[Parsed, int]] = OrderedDict()


def parsed_layer(display: str, text: str, parse: Callable[[str, str], Parsed],
                 left: Callable[[], int] | None = None, charge: Callable[[int], None] | None = None) -> Parsed:
    """``parse(text, display)``, or a copy of its result for the same name and text (see the module
    docstring for ``left`` and ``charge``)."""
    key = (display, text)
    entry = _layers.get(key)
    if entry is None:
        before = left() if left is not None else 0
        parsed = parse(text, display)
        cost = before - left() if left is not None else 0
        _layers[key] = (parsed, cost)
        if len(_layers) > MAX_LAYERS:
            _layers.popitem(last=False)
    else:
        _layers.move_to_end(key)
        parsed, cost = entry
        if charge is not None:
            charge(cost)
    data, locs = parsed
    return copy_tree(data), dict(locs)


def clear() -> None:
    _layers.clear()
