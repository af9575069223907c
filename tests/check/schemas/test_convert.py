"""CRD -> JSON schema conversion: kubeconform's openapi2jsonschema rules, quirks included."""

from __future__ import annotations

import copy
import json

import pytest

from renderer.check.schemas import catalog
from renderer.check.schemas.build import load_yaml_documents
from renderer.check.schemas.convert import (
    INT_OR_STRING,
    additional_properties,
    crd_documents,
    crd_schemas,
    dump_schema,
    replace_int_or_string,
    standalone,
    to_draft4,
)


def crd(schema: dict, versions: tuple[str, ...] = ("v1",), kind: str = "Widget") -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "names": {"kind": kind},
                 "versions": [{"name": v, "schema": {"openAPIV3Schema": copy.deepcopy(schema)}} for v in versions]},
    }


NESTED = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "port": {"format": "int-or-string", "x-kubernetes-int-or-string": True, "description": "d"},
                "any": {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
                "open": {"type": "object", "properties": {"x": {"type": "string"}},
                         "x-kubernetes-preserve-unknown-fields": True},
                "blob": {"x-kubernetes-preserve-unknown-fields": True},
            },
        },
    },
}


def converted(schema: dict = NESTED, **kwargs) -> dict:
    (only,) = crd_schemas(crd(schema), **kwargs).values()
    return only


def test_nested_objects_with_properties_are_closed_but_the_root_is_not() -> None:
    out = converted()
    assert "additionalProperties" not in out
    assert out["properties"]["spec"]["additionalProperties"] is False
    # Arrays are objects' values here, so their dict `items` is walked and closed too.
    assert out["properties"]["spec"]["properties"]["items"]["items"]["additionalProperties"] is False


def test_deny_root_additional_properties_closes_the_root() -> None:
    assert converted(deny_root_additional_properties=True)["additionalProperties"] is False


def test_lists_are_not_entered_so_anyof_branches_stay_open() -> None:
    branch = converted()["properties"]["spec"]["properties"]["any"]["anyOf"][0]
    assert "additionalProperties" not in branch


def test_existing_additional_properties_is_kept() -> None:
    labels = converted()["properties"]["spec"]["properties"]["labels"]
    assert labels["additionalProperties"] == {"type": "string"}


def test_int_or_string_is_replaced_whole() -> None:
    assert converted()["properties"]["spec"]["properties"]["port"] == INT_OR_STRING


def test_int_or_string_replacement_does_enter_lists() -> None:
    schema = {"type": "object", "properties": {"p": {"anyOf": [{"type": "object", "properties": {
        "q": {"format": "int-or-string"}}}]}}}
    assert converted(schema)["properties"]["p"]["anyOf"][0]["properties"]["q"] == INT_OR_STRING


def test_preserve_unknown_fields_with_properties_stays_open_deliberate_deviation() -> None:
    # Upstream closes it (yannh/kubeconform#224); we do not, since the API server accepts unknown keys there.
    spec = converted()["properties"]["spec"]["properties"]
    assert "additionalProperties" not in spec["open"]
    assert spec["blob"] == {"x-kubernetes-preserve-unknown-fields": True}


def test_x_kubernetes_keys_are_kept_and_descriptions_too() -> None:
    out = converted({"type": "object", "properties": {"a": {"type": "string", "description": "kept",
                                                              "x-kubernetes-validations": [{"rule": "self != ''"}]}}})
    assert out["properties"]["a"]["description"] == "kept"
    assert out["properties"]["a"]["x-kubernetes-validations"] == [{"rule": "self != ''"}]


def test_a_field_named_properties_gets_upstreams_bogus_entry() -> None:
    # Upstream walks every dict value, the `properties` map included; that map holds a key "properties"
    # here, so it is "closed" too: a property literally named additionalProperties, schema false.
    schema = {"type": "object", "properties": {"properties": {"type": "string"}}}
    out = converted(schema)
    assert out["properties"]["additionalProperties"] is False


def test_additional_properties_walk_matches_upstreams_own_unit_cases() -> None:
    # The two cases in kubeconform's scripts/openapi2jsonschema.py test_additional_properties().
    assert additional_properties({"something": {"properties": {}}}) == \
        {"something": {"properties": {}, "additionalProperties": False}}
    assert additional_properties({"something": {"somethingelse": {}}}) == {"something": {"somethingelse": {}}}
    assert replace_int_or_string({"something": {"format": "int-or-string"}}) == {"something": INT_OR_STRING}
    assert replace_int_or_string({"something": {"format": "string"}}) == {"something": {"format": "string"}}


def test_one_file_per_version_named_kind_version_lower_case() -> None:
    assert sorted(crd_schemas(crd({"type": "object"}, ("v1", "v2Beta1"), kind="MyWidget"))) == \
        ["mywidget_v1.json", "mywidget_v2beta1.json"]


def test_legacy_spec_validation_and_spec_version() -> None:
    doc = crd({"type": "object"})
    doc["spec"].pop("versions")
    doc["spec"]["version"] = "v1beta1"
    doc["spec"]["validation"] = {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "object",
                                                                                         "properties": {}}}}}
    out = crd_schemas(doc)
    assert list(out) == ["widget_v1beta1.json"]
    assert out["widget_v1beta1.json"]["properties"]["a"]["additionalProperties"] is False


def test_list_documents_are_expanded_and_other_kinds_ignored() -> None:
    one = crd({"type": "object"})
    docs = [{"kind": "List", "items": [one, {"kind": "ConfigMap"}]}, {"kind": "ConfigMap"}, one]
    assert crd_documents(docs) == [one, one]


def test_output_is_two_space_json_with_a_newline() -> None:
    assert dump_schema({"a": {"b": 1}}) == '{\n  "a": {\n    "b": 1\n  }\n}\n'


def test_package_crd_as_the_reference_describes_it() -> None:
    # reference/validation-and-live-state.md §1.7, "measured with my own re-implementation".
    (doc,) = load_yaml_documents((catalog.CRD_DIR / "cozystack.io_packages.yaml").read_text())
    out = crd_schemas(doc)["package_v1alpha1.json"]
    assert "additionalProperties" not in out
    spec = out["properties"]["spec"]
    assert spec["additionalProperties"] is False
    component = spec["properties"]["components"]["additionalProperties"]
    assert component["additionalProperties"] is False
    assert set(component["properties"]) == {"enabled", "values"}
    assert "additionalProperties" not in component["properties"]["values"]  # preserve-unknown, no properties
    assert out["properties"]["metadata"] == {"type": "object"}


def test_nad_crd_closes_spec_only() -> None:
    (doc,) = load_yaml_documents((catalog.CRD_DIR / "network-attachment-definitions.k8s.cni.cncf.io.yaml").read_text())
    out = crd_schemas(doc)["networkattachmentdefinition_v1.json"]
    assert "additionalProperties" not in out
    assert out["properties"]["spec"]["additionalProperties"] is False
    assert out["properties"]["spec"]["properties"] == {"config": {
        "description": "NetworkAttachmentDefinition config is a JSON-formatted CNI configuration", "type": "string"}}


# --- core kinds: kubernetes-validate 2020-12 -> draft-04 -----------------------------------------

DEFS = {
    "a.Obj": {"type": "object", "description": "dropped", "properties": {
        "meta": {"$ref": "#/$defs/a.Meta", "description": "sibling annotation: fine"},
        "description": {"type": "string"},  # a property called description is data, not an annotation
        "self": {"$ref": "#/$defs/a.Obj"},
    }, "x-kubernetes-group-version-kind": [{"group": "", "kind": "Obj", "version": "v1"}]},
    "a.Meta": {"type": ["object", "null"], "properties": {"name": {"type": ["string", "null"]}}},
    "a.Unused": {"type": "string"},
}


def test_to_draft4_rewrites_refs_keeps_reached_definitions_and_property_names() -> None:
    reached: dict = {}
    root = to_draft4({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x",
                      "$ref": "/api/_definitions.json#/$defs/a.Obj"}, DEFS, reached)
    assert root == {"$ref": "#/definitions/a.Obj"}
    assert sorted(reached) == ["a.Meta", "a.Obj"]  # recursion terminates; a.Unused is not carried
    assert reached["a.Obj"]["properties"]["description"] == {"type": "string"}
    assert "description" not in reached["a.Obj"] and "x-kubernetes-group-version-kind" not in reached["a.Obj"]
    assert reached["a.Obj"]["properties"]["self"] == {"$ref": "#/definitions/a.Obj"}


def test_to_draft4_refuses_ref_siblings_that_validate_and_unknown_keywords() -> None:
    with pytest.raises(ValueError, match="sibling"):
        to_draft4({"$ref": "#/$defs/a.Meta", "type": "object"}, DEFS, {})
    with pytest.raises(ValueError, match="prefixItems"):
        to_draft4({"prefixItems": [{"type": "string"}]}, DEFS, {})


def test_standalone_carries_only_what_the_kind_reaches() -> None:
    definitions = {"A": {"$ref": "#/definitions/B"}, "B": {"type": "string"}, "C": {"type": "integer"}}
    out = standalone({"properties": {"a": {"$ref": "#/definitions/A"}}}, definitions)
    assert sorted(out["definitions"]) == ["A", "B"]
    assert json.dumps(out).count("#/definitions/C") == 0
