"""Variant data: the templates each feature choice renders, and the Package catalogue.

The shipped folder is ``variants/`` (inside the wheel at ``renderer/variants``); ``--variants DIR``
points at a user folder whose files override the shipped ones of the same relative path.
Files ending in ``.j2`` go through the sandboxed Jinja2 environment first; plain ``.yaml`` files are
data and never import jinja2.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location, RenderError


def shipped_dir() -> Path:
    here = Path(__file__).resolve().parent
    installed = here / "variants"
    return installed if installed.is_dir() else here.parent / "variants"


class Variants:
    def __init__(self, override: Path | None = None) -> None:
        self.override = override.resolve() if override else None
        self.shipped = shipped_dir()

    def find(self, relpath: str) -> Path:
        for base in (self.override, self.shipped):
            if base is not None and (base / relpath).is_file():
                return base / relpath
        raise RenderError([Finding("VARIANTS", f"variant file {relpath} not found in {self.override or self.shipped}")])

    def load(self, relpath: str, context: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """All YAML documents of a variant file, rendered with ``context`` when it is a template."""
        path = self.find(relpath)
        return [_copy(d) for d in _load(str(path), _freeze(context) if relpath.endswith(".j2") else None)]

    def catalogue(self) -> dict[str, Any]:
        return _load(str(self.find("catalogue.yaml")), None)[0]


def _freeze(value: Any) -> Any:
    import json

    return json.dumps(value, sort_keys=True)


@lru_cache(maxsize=256)
def _load(path: str, frozen_context: str | None) -> list[Any]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    text = Path(path).read_text(encoding="utf-8")
    if frozen_context is not None:
        import json

        from renderer import templating

        try:
            text = templating.render_string(text, json.loads(frozen_context))
        except templating.TemplateProblem as exc:
            raise RenderError([Finding("VARIANTS", str(exc), Location(path))]) from None
    try:
        return [d for d in YAML(typ="safe").load_all(text) if d is not None]
    except YAMLError as exc:
        raise RenderError([Finding("VARIANTS", f"invalid YAML in variant file: {exc}", Location(path))]) from None


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
