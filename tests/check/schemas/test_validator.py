"""The built-in validator: verdicts, messages, paths, versions; cross-checked against jsonschema."""

from __future__ import annotations

import copy
import hashlib

import pytest

from renderer.check.schemas import catalog, store
from renderer.check.schemas.validator import BuiltinValidator, SchemaError, pointer, resolve_name
from renderer.load.yamlio import KEY
from tests.check.schemas import corpus


@pytest.fixture(scope="module")
def builtin() -> BuiltinValidator:
    return BuiltinValidator()


def package(components: dict) -> dict:
    return {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": {"name": "cozystack.metallb"},
            "spec": {"variant": "default", "components": components}}


def daemonset() -> dict:
    (obj,) = corpus.load("gpu-operator-talos-nvidia-driver-compat-daemonset.yaml")
    return obj


def nad() -> dict:
    (obj,) = corpus.load("vlan100-network-attachment-definition.yaml")
    return obj


def test_fixtures_are_the_reference_examples() -> None:
    for name, sha in corpus.EXAMPLE_SHA256.items():
        assert hashlib.sha256((corpus.EXAMPLES / name).read_bytes()).hexdigest() == sha, name


def test_every_example_and_core_sample_is_valid(builtin) -> None:
    for obj in corpus.valid_objects():
        assert builtin.errors(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"


def test_package_component_enabled_must_be_boolean(builtin) -> None:
    errors = builtin.errors(package({"x": {"enabled": "yes"}}))
    assert errors == [SchemaError(("spec", "components", "x", "enabled"), 'got string "yes", want boolean',
                                  ("spec", "components", "x", "enabled"))]
    assert errors[0].pointer == "/spec/components/x/enabled"


def test_package_component_values_stay_open_and_extra_component_keys_do_not(builtin) -> None:
    assert builtin.errors(package({"x": {"values": {"anything": [1, {"deep": None}]}, "enabled": False}})) == []
    (error,) = builtin.errors(package({"x": {"value": {}}}))
    assert error.message == "additional properties 'value' not allowed"
    assert error.path == ("spec", "components", "x")
    assert error.focus == ("spec", "components", "x", "value", KEY)  # the key itself, not its value


def test_package_spec_values_is_refused(builtin) -> None:
    # PKG-05's case, seen by the schema: spec has exactly variant, ignoreDependencies, components.
    obj = package({})
    obj["spec"]["values"] = {"a": 1}
    (error,) = builtin.errors(obj)
    assert (error.pointer, error.message) == ("/spec", "additional properties 'values' not allowed")


def test_nad_with_an_extra_spec_field(builtin) -> None:
    obj = nad()
    obj["spec"]["bridge"] = "br100"
    (error,) = builtin.errors(obj)
    assert error == SchemaError(("spec",), "additional properties 'bridge' not allowed", ("spec", "bridge", KEY))


def test_nad_config_must_be_a_string(builtin) -> None:
    obj = nad()
    obj["spec"]["config"] = {"cniVersion": "0.3.1"}
    assert [e.message for e in builtin.errors(obj)] == ["got object, want string"]


def test_daemonset_missing_selector(builtin) -> None:
    obj = daemonset()
    del obj["spec"]["selector"]
    assert builtin.errors(obj) == [SchemaError(("spec",), "missing property 'selector'", ("spec", KEY))]


def test_every_error_is_reported_not_only_the_first(builtin) -> None:
    obj = daemonset()
    del obj["spec"]["selector"]
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = 3
    obj["metadata"]["labels"]["app.kubernetes.io/part-of"] = True
    got = {(e.pointer, e.message) for e in builtin.errors(obj)}
    assert got == {
        ("/spec", "missing property 'selector'"),
        ("/spec/template/spec/containers/0/image", "got integer 3, want string or null"),
        ("/metadata/labels/app.kubernetes.io~1part-of", "got boolean true, want string or null"),
    }


def test_int_or_string_ports(builtin) -> None:
    service = copy.deepcopy(corpus.CORE_SAMPLES[3])
    assert builtin.errors(service) == []
    service["spec"]["ports"][0]["targetPort"] = 1.5
    (error,) = builtin.errors(service)
    assert error.pointer == "/spec/ports/0/targetPort"


def test_core_enum_on_api_version_and_date_time_format(builtin) -> None:
    obj = package({})
    obj["status"] = {"conditions": [{"type": "Ready", "status": "Maybe", "reason": "R", "message": "",
                                     "lastTransitionTime": "yesterday"}]}
    got = {(e.pointer, e.message) for e in builtin.errors(obj)}
    assert got == {("/status/conditions/0/status", "value must be one of 'True', 'False', 'Unknown'"),
                   ("/status/conditions/0/lastTransitionTime", "'yesterday' is not valid 'date-time'")}


def test_kinds_without_a_schema_are_skipped(builtin) -> None:
    (tenant,) = corpus.load("tenant-kubernetes-gpu-operator-hami.yaml")
    assert not builtin.has_schema(tenant) and builtin.errors(tenant) == []
    old = daemonset()
    old["apiVersion"] = "extensions/v1beta1"  # another group-version is another schema, which we lack
    del old["spec"]["selector"]
    assert builtin.errors(old) == []


def test_another_bundled_version_is_compiled_in_memory_and_agrees() -> None:
    older = BuiltinValidator("1.30")
    assert older.kubernetes_version == "1.30.0"
    obj = daemonset()
    assert older.errors(obj) == []
    del obj["spec"]["selector"]
    assert [e.message for e in older.errors(obj)] == ["missing property 'selector'"]


@pytest.mark.parametrize("given, expected", [(None, catalog.DEFAULT_KUBERNETES_VERSION), ("1.32", "1.32.0"),
                                             ("v1.32.0", "1.32.0"), ("1.32.7", "1.32.0"), (" 1.37.0", "1.37.0")])
def test_kubernetes_version_forms(given, expected) -> None:
    assert catalog.normalize_kubernetes_version(given) == expected


@pytest.mark.parametrize("given", ["1.20", "1.99.0", "master", "latest", "1"])
def test_unbundled_kubernetes_version_is_refused(given) -> None:
    with pytest.raises(ValueError, match=r"no bundled schemas for Kubernetes .*bundled: 1\.25\.0, .*1\.37\.0"):
        catalog.normalize_kubernetes_version(given)


def test_names_with_dots_resolve_against_the_object() -> None:
    obj = {"metadata": {"labels": {"app.kubernetes.io/name": 5, "app": "x"}}, "a": [{"b.c": {"d": 1}}]}
    assert resolve_name("data.metadata.labels.app.kubernetes.io/name", obj) == \
        ("metadata", "labels", "app.kubernetes.io/name")
    assert resolve_name("data.a[0].b.c.d", obj) == ("a", 0, "b.c", "d")
    assert resolve_name("data", obj) == ()


def test_pointer_escapes() -> None:
    assert pointer(()) == "/"
    assert pointer(("metadata", "annotations", "a/b~c", 0)) == "/metadata/annotations/a~1b~0c/0"


def test_kubeconform_naming() -> None:
    # yannh/kubeconform pkg/registry/registry_test.go and the reference's §1.4 examples.
    assert catalog.schema_id("apps/v1", "Deployment") == "deployment-apps-v1"
    assert catalog.schema_id("v1", "Service") == "service-v1"
    assert catalog.schema_id("cozystack.io/v1alpha1", "Package") == "package-cozystack-v1alpha1"
    assert catalog.schema_id("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition") == \
        "networkattachmentdefinition-k8s-v1"
    assert catalog.catalog_path("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition") == \
        "k8s.cni.cncf.io/networkattachmentdefinition_v1.json"


# --- cross-check: fastjsonschema code vs jsonschema's Draft4Validator -------------------------------

def _reference_validator(obj: dict, version: str):
    from jsonschema import Draft4Validator

    schema = store.schema_for(obj["apiVersion"], obj["kind"], version)
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


@pytest.mark.parametrize("version", [catalog.DEFAULT_KUBERNETES_VERSION, "1.26.0"])
def test_builtin_and_jsonschema_agree_on_valid_and_invalid(version) -> None:
    """Every example and core sample, and every mutant of them (wrong types, unknown keys, removed keys)."""
    ours = BuiltinValidator(version)
    checked = invalid = 0
    cache: dict = {}
    for base in corpus.valid_objects():
        if not ours.has_schema(base):
            continue
        key = (base["apiVersion"], base["kind"])
        reference = cache.get(key) or cache.setdefault(key, _reference_validator(base, version))
        for obj in [base, *corpus.mutants(base)]:
            expected = reference.is_valid(obj)
            assert ours.is_valid(obj) == expected, (version, obj)
            assert (ours.errors(obj) == []) == expected, (version, obj)
            checked += 1
            invalid += not expected
    assert checked > 1000 and invalid > 400  # the corpus really exercises both answers
