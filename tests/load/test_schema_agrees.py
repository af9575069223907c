"""The published layer schema and the loader give the same verdict (issue 23, item 1).

Every case under ``tests/cases/`` (the golden cases and the hostile-input corpus ``tests/cases/invalid/``)
and the bundled samples run through the loader (``load_overlay``) and, file by file, through a stock
Draft 7 validator (jsonschema, as an editor's yaml-language-server would) with the layer schema
``renderer/data/overlay-layer.schema.json``. Where the loader refuses the shape (OVL-SCHEMA) the
validator must flag some layer file the loader read, and where the loader accepts the shape it must
flag none. The few cases that differ are listed in ``EXCEPTIONS`` by the reason in
``renderer.load.overlay_schema.LOADER_DIFFERS``, and must keep differing (the list cannot rot).

Inputs the loader refuses before it sees a shape (YAML it cannot read, the size budget) are not shape
verdicts: their code must be one of ``UNREAD`` and the stock validator is not asked (a billion-laughs
file would make it walk every alias).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from renderer.errors import RenderError
from renderer.load.overlay import load_overlay
from renderer.load.overlay_schema import LAYER_SCHEMA_FILE, LOADER_DIFFERS, SCHEMA_FILE
from tests.conftest import OVERLAYS
from tests.test_invalid_corpus import build, remove_tree

CASES = Path(__file__).resolve().parents[1] / "cases"
UNREAD = {"OVL-YAML", "OVL-LIMIT", "OVL-DUPLICATE"}

# case name -> the LOADER_DIFFERS entry that explains why the verdicts differ there.
EXCEPTIONS = {
    "layering-missing-required": "required",
    "plt-02-fail": "platform.variant",
    "yaml-two-documents": "one document",
    "yaml-forty-document-bomb": "one document",
}


def _validator() -> jsonschema.Draft7Validator:
    schema = json.loads(LAYER_SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


LAYER = _validator()


def _cases() -> list[tuple[str, Path, dict[str, Any] | None]]:
    golden = [(p.name, p, None) for p in sorted(CASES.iterdir()) if (p / "case.yaml").is_file()]
    corpus = [(p.name, p, json.loads((p / "case.json").read_text(encoding="utf-8")))
              for p in sorted((CASES / "invalid").iterdir()) if (p / "case.json").is_file()]
    return [("samples", OVERLAYS, None), *golden, *corpus]


def _tree(case: Path, spec: dict[str, Any] | None, tmp_path: Path) -> Path:
    if spec is not None:
        return build(case, tmp_path, spec)
    root = tmp_path / "repo"
    source = case if case == OVERLAYS else case / "repo"
    if source.is_dir():
        shutil.copytree(source, root, symlinks=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    return root


def _cluster_files(root: Path) -> list[Path]:
    clusters = root / "clusters"
    if not clusters.is_dir() or clusters.is_symlink():
        return []
    return sorted(p / "cluster.yaml" for p in clusters.iterdir()
                  if not p.is_symlink() and p.is_dir() and (p / "cluster.yaml").exists())


def _layers(cluster_file: Path, root: Path) -> list[tuple[Path, Any]]:
    """The files the cluster applies and their data, read with a stock YAML parser as an editor reads them."""
    seen: dict[Path, Any] = {}
    todo = [cluster_file]
    while todo and len(seen) < 200:
        path = todo.pop()
        try:
            if path in seen or not path.is_file() or not path.resolve().is_relative_to(root.resolve()):
                continue  # outside the repository: the loader's OVL-PATH
            data = seen[path] = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        except Exception:  # noqa: BLE001 - an unreadable file is the loader's OVL-PATH or OVL-YAML, not a shape
            continue
        if isinstance(data, dict) and isinstance(data.get("inherits"), list):
            todo += [Path(os.path.normpath(path.parent / raw)) for raw in data["inherits"]
                     if isinstance(raw, str) and raw and "\0" not in raw and not os.path.isabs(raw)]
    return list(seen.items())


def _schema_refuses(layers: list[tuple[Path, Any]]) -> list[str]:
    return [f"{path.name}: {e.message}" for path, data in layers for e in LAYER.iter_errors(data)]


def _verdicts(root: Path) -> list[tuple[str, bool, bool, str | None, list[str]]]:
    """Each cluster the loader reads: (name, the loader refuses its shape, the schema refuses it, code, why)."""
    verdicts = []
    for cluster_file in _cluster_files(root):
        try:
            load_overlay(cluster_file.parent)
            code = None
        except RenderError as exc:
            code = exc.findings[0].code
        if code in UNREAD:
            continue
        refused = _schema_refuses(_layers(cluster_file, root))
        verdicts.append((cluster_file.parent.name, code == "OVL-SCHEMA", bool(refused), code, refused))
    return verdicts


@pytest.mark.parametrize(("name", "case", "spec"), _cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_layer_schema_and_the_loader_agree(name: str, case: Path, spec: dict[str, Any] | None,
                                               tmp_path: Path) -> None:
    root = _tree(case, spec, tmp_path)
    try:
        verdicts = _verdicts(root)
    finally:
        if spec is not None and spec.get("deep"):
            remove_tree(tmp_path)  # pytest's own clean-up recurses: a 1,500-deep tree left here breaks a later run
    differ = [v for v in verdicts if v[1] != v[2]]
    if name in EXCEPTIONS:
        assert EXCEPTIONS[name] in LOADER_DIFFERS
        assert differ, f"{name} is listed as an exception ({EXCEPTIONS[name]}) but the verdicts agree"
    else:
        assert differ == [], differ


def test_every_exception_names_a_case() -> None:
    names = {name for name, _, _ in _cases()}
    assert set(EXCEPTIONS) <= names


def test_an_unknown_variant_is_flagged_and_the_variants_complete() -> None:
    """yaml-language-server validates with the layer schema and completes an ``enum``: the same schema in
    a stock Draft 7 validator flags ``isp-ful`` and offers every variant."""
    errors = list(LAYER.iter_errors({"platform": {"variant": "isp-ful"}}))
    assert [list(e.path) for e in errors] == [["platform", "variant"]]
    assert "is not one of" in errors[0].message
    variant = LAYER.schema["properties"]["platform"]["properties"]["variant"]
    assert [v for v in variant["enum"] if v] == ["default", "isp-full", "isp-full-generic", "isp-hosted"]
    assert list(LAYER.iter_errors({"platform": {"version": "v9.9.9"}}))
    assert not list(LAYER.iter_errors({"platform": {"version": "v1.6.2", "variant": "isp-full"}}))


def test_what_the_loader_accepts_in_one_layer_the_schema_accepts() -> None:
    """The layering syntax: ``key+`` on list keys, ``key: null`` deletions; never ``inherits+``."""
    layer = {"vlans+": [{"name": "v", "id": 100}], "gpu": None, "host": {"nodes+": [], "os": None},
             "platform": {"values": {"bundles": {"enabledPackages+": ["cozystack.x"]}}}}
    assert list(LAYER.iter_errors(layer)) == []
    assert list(LAYER.iter_errors({"inherits+": ["../base.yaml"]}))
    assert list(LAYER.iter_errors({"host+": {"os": "apt"}}))


def test_the_merged_schema_carries_the_same_enums() -> None:
    merged = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert merged["properties"]["platform"]["properties"]["variant"]["enum"][0] == "default"
    assert list(jsonschema.Draft7Validator(merged).iter_errors(
        {"apiVersion": "render.cozystack.io/v1alpha1", "kind": "ClusterOverlay", "metadata": {"name": "c1"},
         "host": {"os": "apt"}, "platform": {"variant": "isp-ful"}}))
