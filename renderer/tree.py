"""Plain data trees (dicts, lists, scalars from YAML/JSON): reading a value by its path, copying and
Helm's value merge."""

from __future__ import annotations

from typing import Any


def dig(node: Any, *path: Any, default: Any = None) -> Any:
    """The value at ``path`` in a plain data tree: a mapping by key, a list by index (an ``int`` in
    range; a negative index or a bool is none), else ``default`` once the path leaves the tree (a
    missing key, a scalar on the way). A key present with the value None gives None, not ``default``."""
    for key in path:
        if isinstance(node, dict):
            if key not in node:
                return default
        elif not (isinstance(node, list) and type(key) is int and 0 <= key < len(node)):
            return default
        node = node[key]
    return node


def copy_tree(value: Any) -> Any:
    """A deep copy of plain data; much cheaper than ``copy.deepcopy`` for it."""
    if isinstance(value, dict):
        return {k: copy_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_tree(v) for v in value]
    return value


def helm_merge(base: Any, over: Any) -> Any:
    """Helm value semantics, as the platform chart and helm-controller apply them: maps merge key by
    key, lists and scalars replace, ``null`` deletes. Neither input is modified; the result shares
    nothing with ``over``."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = helm_merge(out.get(k), v)
        return out
    return copy_tree(over)
