"""Every command's ``-o json`` validates against its published schema (issue 23, item 2), on every
bundled sample cluster, with a stock Draft 7 validator; the schemas agree on field names.

The schemas live in ``renderer/data/output-schemas/`` (shipped: tests/test_packaging.py compares the
wheel with the package tree; ``cozy-render schema output NAME``)
and at the repository's stable path ``schemas/output/`` (``python -m renderer.generate`` copies them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from renderer.commands.schemas import OUTPUT_SCHEMAS, OUTPUTS, output_schema_file
from renderer.model import JSON_API_VERSION
from tests.conftest import OVERLAYS, REPO

SAMPLES = sorted(p.name for p in (OVERLAYS / "clusters").iterdir() if (p / "cluster.yaml").is_file())
LOCATION_SPELLINGS = {"col", "lineNumber", "columnNumber", "row"}  # never: line and column everywhere


def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(output_schema_file(name).read_text(encoding="utf-8"))
    return data


def _valid(name: str, out: str) -> Any:
    document = json.loads(out)
    schema = _schema(name)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(document)]
    assert errors == [], errors[:5]
    return document


def test_one_schema_per_json_output() -> None:
    assert sorted(p.name for p in OUTPUT_SCHEMAS.glob("*.schema.json")) == sorted(f"{n}.schema.json" for n in OUTPUTS)
    for name in OUTPUTS:
        jsonschema.Draft7Validator.check_schema(_schema(name))
        assert (REPO / "schemas" / "output" / f"{name}.schema.json").read_bytes() == output_schema_file(name).read_bytes()


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        out = set((node.get("properties") or {}).keys())
        for value in node.values():
            out |= _keys(value)
        return out
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node)) if node else set()
    return set()


@pytest.mark.parametrize("name", OUTPUTS)
def test_field_names_are_the_same_everywhere(name: str) -> None:
    """line, column, cluster, code, severity, message: one spelling in every output."""
    schema = _schema(name)
    assert not _keys(schema) & LOCATION_SPELLINGS
    if "apiVersion" in schema["required"] and name != "render":
        assert schema["properties"]["apiVersion"]["const"] == JSON_API_VERSION  # the one the code writes
    finding = (schema.get("definitions") or {}).get("finding")
    if finding:
        assert {"cluster", "code", "severity", "message", "file", "line", "column"} <= set(finding["properties"])


def test_schema_output_prints_each(cli) -> None:
    for name in OUTPUTS:
        code, out, _ = cli("schema", "output", name)
        assert code == 0 and json.loads(out) == _schema(name)
    code, _, err = cli("schema", "output", "nope")
    assert code == 2 and "nope" in err


@pytest.mark.parametrize("cluster", SAMPLES)
def test_each_command_on_each_sample(cli, cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    path = f"overlays/clusters/{cluster}"
    for name, args in (("render", ["render", path]), ("check", ["check", path]), ("explain", ["explain", path]),
                       ("explain", ["explain", path, "--rendered"]), ("inputs", ["inputs", path])):
        code, out, err = cli(*args, "-o", "json")
        assert code in (0, 1), f"{args}: {err}"
        _valid(name, out)


def test_tree_wide_commands(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert {c["name"] for c in _valid("ls", cli("ls", "overlays", "-o", "json")[1])["clusters"]} == set(SAMPLES)
    _valid("check", cli("check", "overlays", "--all", "-o", "json")[1])
    _valid("inputs", cli("inputs", "overlays", "--all", "-o", "json")[1])
    assert len(_valid("rules", cli("rules", "-o", "json")[1])["rules"]) > 50
    _valid("rules", cli("rules", "PLT-11", "-o", "json")[1])


def test_explain_keys_and_locations(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    values = _valid("explain", cli("explain", "overlays/clusters/gpu-apt-01", "-o", "json")[1])["values"]
    assert all({"line", "column"} <= set(v) for v in values)


def test_a_refused_check_is_still_the_findings_document(cli, tmp_path: Path) -> None:
    bad = tmp_path / "repo" / "clusters" / "c1"
    bad.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (bad / "cluster.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nhubbel: {}\n")
    code, out, _ = cli("check", str(bad), "-o", "json")
    assert code == 3
    assert _valid("check", out)["findings"][0]["code"] == "OVL-SCHEMA"


def test_diff_against_a_snapshot(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """diff's shape is still moving (the schema is loose there; see its description)."""
    monkeypatch.chdir(REPO)
    code, rendered, err = cli("render", "overlays/clusters/vlan-apt-01")
    assert code == 0, err
    snapshot = tmp_path / "live.yaml"
    snapshot.write_text(rendered.replace("tenant-example", "tenant-other", 1), encoding="utf-8")
    code, out, err = cli("diff", "overlays/clusters/vlan-apt-01", "--snapshot", str(snapshot), "-o", "json")
    assert code in (0, 1), err
    assert _valid("diff", out)["clusters"][0]["objects"]


def test_effective(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """effective's shape is still moving (the schema is loose there); it runs the real helm."""
    helm = shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))
    if not helm:
        pytest.skip("no helm 3 on PATH or in .ci/bin (run .ci/fetch_kubectl.py .ci/bin helm)")
    monkeypatch.chdir(REPO)
    code, out, err = cli("effective", "overlays/clusters/gpu-apt-01", "--helm", helm, "-o", "json")
    assert code == 0, err
    assert _valid("effective", out)["packages"]
