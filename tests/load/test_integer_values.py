"""The loader and the editor schema agree on every value where the schema says integer (``vlans[].id``,
``vlans[].mtu``): a YAML scalar is accepted by ``load_overlay`` exactly when a stock Draft 7 validator
(jsonschema, as yaml-language-server validates) accepts it with the layer schema and with the merged
schema. JSON Schema counts an integral float (``100.0``, ``1e2``) as an integer, so the loader takes it
as that integer: the overlay holds ``100`` and the render and node-config are the bytes of ``id: 100``."""

from __future__ import annotations

import json

import jsonschema
import pytest
from ruamel.yaml import YAML

from renderer.errors import RenderError
from renderer.load.overlay import load_overlay
from renderer.load.overlay_schema import LAYER_SCHEMA_FILE, SCHEMA_FILE

HEAD = ("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\nhost: {os: apt}\n"
        "platform: {variant: isp-full-generic}\n")
# Integers, integral floats in every YAML 1.2 spelling, and what is not an integer by either reader.
SCALARS = ["100", "0x64", "0o144", "+100", "1_00", "100.0", "100.", "1e2", "1.0E2", "10000e-2", "-0.0", "1e20",
           "100.5", "100.000001", "1e-2", ".5e3", "true", "false", "'100'", "'100.0'", "[100]", "{a: 1}", "~"]
LAYER = jsonschema.Draft7Validator(json.loads(LAYER_SCHEMA_FILE.read_text(encoding="utf-8")))
MERGED = jsonschema.Draft7Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def _vlan(field: str, scalar: str) -> str:
    entry = {"id": "100", "mtu": "1500"} | {field: scalar}
    return HEAD + (f"vlans:\n  - {{name: v100, id: {entry['id']}, uplink: eno2, bridge: br100, namespaces: [t],"
                   f" mtu: {entry['mtu']}}}\n")


def _loader_accepts(repo, text: str) -> tuple[bool, object]:
    root = repo({"clusters/c1/cluster.yaml": text})
    try:
        overlay = load_overlay(root / "clusters" / "c1")
    except RenderError as exc:
        assert exc.findings[0].code == "OVL-SCHEMA", exc.findings
        return False, None
    return True, overlay.data["vlans"][0]


@pytest.mark.parametrize("field", ["id", "mtu"])
@pytest.mark.parametrize("scalar", SCALARS)
def test_the_loader_and_the_editor_schema_agree_on_an_integer(repo, field: str, scalar: str) -> None:
    text = _vlan(field, scalar)
    data = YAML(typ="safe").load(text)  # as an editor reads the file
    layer_ok = not list(LAYER.iter_errors(data))
    merged_ok = not list(MERGED.iter_errors(data))
    loaded, vlan = _loader_accepts(repo, text)
    assert layer_ok == merged_ok == loaded, (scalar, layer_ok, merged_ok, loaded)
    if loaded:
        assert isinstance(vlan, dict)
        value = vlan[field]
        assert type(value) is int and value == data["vlans"][0][field]


@pytest.mark.parametrize(("field", "scalar", "integer"), [("id", "100.0", "100"), ("id", "1e2", "100"),
                                                         ("mtu", "1500.0", "1500"), ("mtu", "15e2", "1500")])
@pytest.mark.parametrize("command", [["render"], ["render", "-o", "json"], ["node-config"]])
def test_an_integral_float_renders_the_bytes_of_the_integer(cli, repo, field: str, scalar: str, integer: str,
                                                            command: list[str]) -> None:
    outputs = []
    for value in (scalar, integer):
        root = repo({"clusters/c1/cluster.yaml": _vlan(field, value)})
        code, out, err = cli(*command, str(root / "clusters" / "c1"))
        assert code == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1]


def test_explain_shows_the_integer(cli, repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": _vlan("id", "100.0")})
    code, out, err = cli("explain", str(root / "clusters" / "c1"), "vlans.0.id", "-o", "json")
    assert (code, err) == (0, "")
    assert [(v["key"], v["value"], v["line"]) for v in json.loads(out)["values"]] == [("vlans.0.id", 100, 7)]
