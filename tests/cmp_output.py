"""What `cmp generate` adds to a render: the warnings annotation on the platform Package (README
"Warnings in Argo CD"). Tests that compare `cmp generate` with `render` take it off with this."""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML

WARNINGS_ANNOTATION = "render.cozystack.io/warnings"


def split_warnings(stream: str) -> tuple[list[Any], list[str]]:
    """The objects of a `cmp generate` stream without the warnings annotation, and that annotation's lines."""
    objects = [d for d in YAML(typ="safe").load_all(stream) if d is not None]
    found: list[str] = []
    for obj in objects:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if WARNINGS_ANNOTATION in annotations:
            assert not found, "the warnings are on one object only"
            found = annotations.pop(WARNINGS_ANNOTATION).split("\n")
            if not annotations:
                del obj["metadata"]["annotations"]
    return objects, found


def render_objects(stream: str) -> list[Any]:
    return [d for d in YAML(typ="safe").load_all(stream) if d is not None]
