"""The published layer schema (renderer/data/overlay-layer.schema.json): what any one overlay file may
hold, for editors. Checked with a stock Draft 7 validator (jsonschema), not the generated one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

import renderer
from renderer.load.overlay_schema import LAYER_SCHEMA_FILE, SCHEMA_FILE, layer_schema
from tests.conftest import OVERLAYS, REPO

PACKAGE = Path(renderer.__file__).resolve().parent

SAMPLE_LAYERS = sorted(p for p in OVERLAYS.rglob("*.yaml") if "ClusterOverlay" in p.read_text(encoding="utf-8"))


def _published() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(LAYER_SCHEMA_FILE.read_text(encoding="utf-8"))
    return data


def test_the_published_file_is_the_generated_schema() -> None:
    assert _published() == layer_schema()
    jsonschema.Draft7Validator.check_schema(_published())


def test_there_are_base_and_cluster_samples() -> None:
    names = {p.relative_to(OVERLAYS).parts[0] for p in SAMPLE_LAYERS}
    assert names == {"base", "clusters"}


@pytest.mark.parametrize("path", SAMPLE_LAYERS, ids=lambda p: str(p.relative_to(OVERLAYS)))
def test_every_sample_file_validates_under_draft_7(path: Path) -> None:
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    errors = [e.message for e in jsonschema.Draft7Validator(_published()).iter_errors(data)]
    assert errors == []


def test_the_merged_schema_still_requires_what_a_cluster_needs() -> None:
    """Bases fail the merged schema (that is why the layer schema exists)."""
    data = YAML(typ="safe").load((OVERLAYS / "base" / "cluster.yaml").read_text(encoding="utf-8"))
    merged = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert list(jsonschema.Draft7Validator(merged).iter_errors(data))


def test_a_typo_still_fails_the_layer_schema() -> None:
    errors = list(jsonschema.Draft7Validator(_published()).iter_errors({"gpu": {"variant": "vgpuu"}, "hubbel": {}}))
    assert len(errors) == 2


def _properties(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        for key, sub in (node.get("properties") or {}).items():
            out.append((f"{path}.{key}", sub))
            out += _properties(sub, f"{path}.{key}")
        for kw in ("items", "additionalProperties"):
            if isinstance(node.get(kw), dict):
                out += _properties(node[kw], f"{path}[]")
    return out


def test_every_key_has_a_description() -> None:
    missing = [path for path, sub in _properties(_published()) if not sub.get("description")]
    assert missing == []


def test_schema_overlay_layer_prints_it(cli) -> None:
    code, out, _ = cli("schema", "overlay", "--layer")
    assert code == 0
    assert json.loads(out)["$id"] == "https://render.cozystack.io/schemas/overlay-layer-v1alpha1.json"
    code, out, _ = cli("schema", "overlay")
    assert json.loads(out)["required"] == ["apiVersion", "kind", "metadata", "host", "platform"]


def test_the_wheel_ships_the_layer_schema() -> None:
    # Every file of the package folder ships (MANIFEST.in grafts renderer/; tests/test_packaging.py compares
    # the built wheel with the tree file by file).
    assert LAYER_SCHEMA_FILE.resolve().is_relative_to(PACKAGE)
    assert LAYER_SCHEMA_FILE.parent.name == "data"


def test_sample_modelines_point_at_the_layer_schema() -> None:
    for path in SAMPLE_LAYERS:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        if "yaml-language-server" in first:
            target = (path.parent / first.split("$schema=", 1)[1]).resolve()
            # the source tree's copy (the package under test may be an installed wheel: .ci/run)
            assert target == REPO / LAYER_SCHEMA_FILE.resolve().relative_to(PACKAGE.parent), path
