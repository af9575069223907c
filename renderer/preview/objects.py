"""One cluster's rendered objects at the base against the head: statuses, changed paths, masking.

Both sides are renders, so both go through the live diff's normalisation
(``renderer.diff.normalize.normalise``: the same defaults filled in, integral floats, ``stringData``
folded into ``data``), the same ``--ignore``/``diff.ignore`` pointers
(``renderer.diff.compare.apply_ignores``) and the same Secret masking
(``renderer.diff.compare.mask``: ``***``, ``*** (before)`` / ``*** (after)``). Statuses are the live
diff's, read as what syncing the head after the base does: ``create`` (the head renders it, the base
did not), ``change``, ``unchanged``, ``orphaned`` (the base rendered it, the head no longer does: Argo
CD prunes it, Flux garbage-collects it). Nothing here does I/O.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from renderer.diff.compare import (
    CHANGE,
    CREATE,
    ORPHANED,
    UNCHANGED,
    Ignore,
    Key,
    apply_ignores,
    key_of,
    mask,
)
from renderer.diff.normalize import normalise

Obj = dict[str, Any]


class ObjectChange(NamedTuple):
    """One object's outcome. ``base``/``head`` are normalised and masked: safe to print."""

    key: Key  # API group, kind, namespace, name
    api_version: str
    status: str  # create | change | unchanged | orphaned
    base: Obj | None
    head: Obj | None

    def changes(self) -> list[dict[str, Any]]:
        """Changed paths (JSON pointers) with their old and new values, on the masked copies."""
        if self.status == UNCHANGED:
            return []
        return value_changes(self.base, self.head)


def compare_objects(base: list[Obj], head: list[Obj], ignores: list[Ignore], *,
                    show_secrets: bool = False) -> list[ObjectChange]:
    """Head objects in render order (created, changed or unchanged), then the orphaned ones by key."""
    before = {key_of(o): o for o in base}
    out: list[ObjectChange] = []
    seen: set[Key] = set()
    for obj in head:
        key = key_of(obj)
        seen.add(key)
        old = before.get(key)
        want = normalise(obj)
        have = normalise(old) if old is not None else None
        apply_ignores(want, key, ignores)
        apply_ignores(have, key, ignores)
        status = CREATE if have is None else UNCHANGED if have == want else CHANGE
        shown_base, shown_head = (have, want) if show_secrets else mask(have, want)
        out.append(ObjectChange(key, str(obj.get("apiVersion", "")), status, shown_base, shown_head))
    for key in sorted(k for k in before if k not in seen):
        old_obj = normalise(before[key])
        apply_ignores(old_obj, key, ignores)
        shown, _ = (old_obj, None) if show_secrets else mask(old_obj, None)
        out.append(ObjectChange(key, str(before[key].get("apiVersion", "")), ORPHANED, shown, None))
    return out


def counts(changes: list[ObjectChange]) -> dict[str, int]:
    return {s: sum(1 for c in changes if c.status == s) for s in (CREATE, CHANGE, UNCHANGED, ORPHANED)}


def _pointer(parts: tuple[Any, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def value_changes(old: Any, new: Any, path: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """``[{path, type, old?, new?}]``: ``added``/``removed`` keys or list items, ``changed`` values.

    Maps are compared key by key; lists item by item (a longer list adds items at its end); a value
    whose type changes (a map becoming a string) is one ``changed`` entry. Sorted by path."""
    out: list[dict[str, Any]] = []
    _walk(old, new, path, out)
    return sorted(out, key=lambda e: e["path"])


_ABSENT = object()


def _walk(old: Any, new: Any, path: tuple[Any, ...], out: list[dict[str, Any]]) -> None:
    if old is None and new is None:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new), key=str):
            _walk(old.get(k, _ABSENT), new.get(k, _ABSENT), (*path, k), out)
        return
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            _walk(old[i] if i < len(old) else _ABSENT, new[i] if i < len(new) else _ABSENT, (*path, i), out)
        return
    if old is _ABSENT or (old is None and not path):
        out.append({"path": _pointer(path), "type": "added", "new": new})
    elif new is _ABSENT or (new is None and not path):
        out.append({"path": _pointer(path), "type": "removed", "old": old})
    elif old != new or type(old) is not type(new):
        out.append({"path": _pointer(path), "type": "changed", "old": old, "new": new})
