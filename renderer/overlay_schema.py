"""The overlay's published JSON Schema and its validation, with did-you-mean for unknown keys.

Each layer is validated against the schema with every ``required`` removed (a base is partial);
the merged overlay against the full schema. fastjsonschema compiles the schema into Python code
once per process, which keeps validation out of the start-up budget that jsonschema would eat.
"""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from renderer.errors import Finding, Location, RenderError
from renderer.yamlio import KEY, Locations

SCHEMA_FILE = Path(__file__).parent / "data" / "overlay.schema.json"


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _without_required(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_required(v) for k, v in node.items() if k != "required"}
    if isinstance(node, list):
        return [_without_required(v) for v in node]
    return node


@lru_cache(maxsize=2)
def _validator(partial: bool) -> Callable[[Any], Any]:
    import fastjsonschema

    doc = _without_required(schema()) if partial else schema()
    return fastjsonschema.compile(doc)


def validate_layer(data: Any, locs: Locations, display: str) -> None:
    _validate(data, locs, display, partial=True)


def validate_merged(data: Any, locs: Locations, display: str) -> None:
    _validate(data, locs, display, partial=False)


def _validate(data: Any, locs: Locations, display: str, partial: bool) -> None:
    import fastjsonschema

    try:
        _validator(partial)(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise RenderError([_finding(exc, data, locs, display)]) from None


def _locate(locs: Locations, path: tuple[Any, ...], display: str) -> Location:
    while path not in locs and path:
        path = path[:-1]
    return locs.get(path) or Location(display, 1, 1)


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _finding(exc: Any, data: Any, locs: Locations, display: str) -> Finding:
    path = tuple(int(p) if isinstance(p, str) and p.isdigit() and _is_list_at(data, exc.path[1:], i) else p
                 for i, p in enumerate(exc.path[1:]))
    where = _dotted(path)
    rule = exc.rule
    definition = exc.rule_definition
    value = exc.value
    if rule == "additionalProperties" and isinstance(value, dict):
        known = sorted((exc.definition or {}).get("properties", {}))
        unknown = sorted(set(value) - set(known))
        key = unknown[0] if unknown else "?"
        hint = difflib.get_close_matches(key, known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else (f" (known: {', '.join(known)})" if known else "")
        target = f"{where}.{key}" if path else key
        where_key = locs.get(path + (key, KEY)) or _locate(locs, path + (key,), display)
        return Finding("OVL-SCHEMA", f"unknown key {target!r}{suggestion}", where_key)
    if rule == "required":
        missing = [k for k in definition if not isinstance(value, dict) or k not in value]
        return Finding("OVL-SCHEMA", f"{where}: missing required key {missing[0]!r}", _locate(locs, path, display))
    if rule == "enum":
        hint = difflib.get_close_matches(str(value), [str(d) for d in definition], n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        return Finding("OVL-SCHEMA", f"{where}: {value!r} is not one of {', '.join(map(str, definition))}{suggestion}",
                       _locate(locs, path, display))
    if rule == "const":
        return Finding("OVL-SCHEMA", f"{where} must be {definition!r}, got {value!r}", _locate(locs, path, display))
    if rule == "type":
        want = definition if isinstance(definition, str) else " or ".join(definition)
        return Finding("OVL-SCHEMA", f"{where} must be {_article(want)}, got {_json_type(value)}",
                       _locate(locs, path, display))
    if rule == "pattern":
        return Finding("OVL-SCHEMA", f"{where}: {value!r} does not match {definition}", _locate(locs, path, display))
    message = exc.message.replace("data.", "", 1).replace("data ", "", 1)
    return Finding("OVL-SCHEMA", message, _locate(locs, path, display))


def _is_list_at(data: Any, raw_path: list[Any], index: int) -> bool:
    node = data
    for p in raw_path[:index]:
        if isinstance(node, dict):
            node = node.get(p)
        elif isinstance(node, list) and str(p).isdigit():
            node = node[int(p)]
    return isinstance(node, list)


def _article(word: str) -> str:
    return ("an " if word[:1] in "aeio" else "a ") + word


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, list):
        return "array"
    return "object"
