"""GPU-* and HAMI-* rules: for each, at least one overlay that fires it and one that does not.

Overlays are written as JSON (valid YAML) into a throw-away repo; each test runs only the rule it is
about, so a failing case stays about that rule. Locations are compared with the overlay's own
positions, so a refusal must point at the line that chose the variant (or the offending key).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from renderer.check.rules import run_rules
from renderer.check.rules.gpu import PLT03_MESSAGE, memory_bytes
from renderer.errors import ERROR, WARNING, Finding, RenderError
from renderer.load.overlay import Overlay, load_overlay
from tests.conftest import BASE_OVERLAY, overlay_doc
from tests.helpers import emit_overlay, render

BASE = BASE_OVERLAY
TALOS = {"host": {"os": "talos"}, "platform": {"variant": "isp-full"}}
APT_CONTAINER = {"host": {"os": "apt", "nvidiaDriver": True, "nvidiaContainerRuntime": True},
                 "gpu": {"variant": "container"}}
VGPU_MANAGER = {"repository": "registry.example.com/nvidia", "image": "vgpu-manager",
                "version": "595.58.02-ubuntu24.04", "imagePullSecrets": ["nvidia-registry-secret"]}
VGPU = {"gpu": {"variant": "vgpu", "vgpuManager": VGPU_MANAGER, "vgpuDeviceManager": {"enabled": True}}}
# The values of packages/system/gpu-operator/examples/values-native-talos.yaml (cozystack/cozystack @
# 3c780acd, Apache-2.0), written by hand in packages: instead of through gpu.variant.
TALOS_NATIVE_VALUES = {"gpu-operator": {
    "hostPaths": {"driverInstallDir": "/var/nvidia-driver"},
    "sandboxWorkloads": {"enabled": False}, "vfioManager": {"enabled": False},
    "toolkit": {"enabled": False}, "devicePlugin": {"enabled": True},
    "dcgmExporter": {"config": {"name": "dcgm-custom-metrics"}}}}


def overlay(*parts: dict[str, Any], **sections: Any) -> dict[str, Any]:
    return overlay_doc(*parts, **sections)


@pytest.fixture
def check(repo):
    """Run one rule over an overlay; returns (findings, overlay)."""

    def run(rule_id: str, data: dict[str, Any]) -> tuple[list[Finding], Overlay]:
        root = repo({"clusters/c1/cluster.yaml": json.dumps(data, indent=2)})
        loaded = load_overlay(root / "clusters" / "c1")
        return run_rules(emit_overlay(loaded), only=[rule_id]), loaded

    return run


def one(findings: list[Finding], severity: str = ERROR) -> Finding:
    assert len(findings) == 1, [f.format() for f in findings]
    assert findings[0].severity == severity
    return findings[0]


# --- GPU operator ------------------------------------------------------------------------------


def test_gpu_01_unknown_operator_variant(check) -> None:
    found, ov = check("GPU-01", overlay(packages={"cozystack.gpu-operator": {"variant": "passthrough"}}))
    f = one(found)
    assert "default, vgpu, container" in f.message and "'passthrough'" in f.message
    assert f.location == ov.locate(("packages", "cozystack.gpu-operator", "variant"))
    assert not check("GPU-01", overlay(packages={"cozystack.gpu-operator": {"variant": "container"}}))[0]


def test_gpu_02_container_package_while_the_bundle_enables_it(check) -> None:
    bad = overlay(platform={"variant": "isp-full-generic",
                            "values": {"bundles": {"enabledPackages": ["cozystack.gpu-operator"]}}},
                  packages={"cozystack.gpu-operator": {"variant": "container"}})
    found, ov = check("GPU-02", bad)
    assert one(found).location == ov.locate(("platform", "values", "bundles", "enabledPackages", 0))
    # gpu.variant: container puts the name in disabledPackages, which wins over the shared enable.
    good = overlay(APT_CONTAINER, platform={"variant": "isp-full-generic",
                                           "values": {"bundles": {"enabledPackages": ["cozystack.gpu-operator"]}}})
    assert not check("GPU-02", good)[0]


def test_gpu_03_container_in_gpu_operator_variant_quotes_the_chart(check) -> None:
    bad = overlay(platform={"variant": "isp-full-generic",
                            "values": {"bundles": {"iaas": {"gpuOperatorVariant": "container"}}}})
    found, ov = check("GPU-03", bad)
    f = one(found)
    assert f.message.startswith('bundles.iaas.gpuOperatorVariant must be "default" or "vgpu", got "container"')
    assert PLT03_MESSAGE.format(value="container") in f.message and "standalone Package" in f.message
    assert f.location == ov.locate(("platform", "values", "bundles", "iaas", "gpuOperatorVariant"))
    # iaas does not render on isp-hosted: the chart never reads the value.
    hosted = copy.deepcopy(bad)
    hosted["platform"]["variant"] = "isp-hosted"
    assert not check("GPU-03", hosted)[0]
    # PLT-03 owns every other invalid value.
    other = copy.deepcopy(bad)
    other["platform"]["values"]["bundles"]["iaas"]["gpuOperatorVariant"] = "passthrough"
    assert not check("GPU-03", other)[0]


def test_gpu_04_passthrough_with_a_host_driver(check) -> None:
    bad = overlay(host={"os": "apt", "nvidiaDriver": True}, gpu={"variant": "default"})
    found, ov = check("GPU-04", bad)
    f = one(found)
    assert "isHostDriver" in f.message and f.location == ov.locate(("gpu", "variant"))
    assert not check("GPU-04", overlay(host={"os": "apt", "nvidiaDriver": False}, gpu={"variant": "default"}))[0]
    assert not check("GPU-04", overlay(gpu={"variant": "default"}))[0]  # fact unknown: skipped
    assert not check("GPU-04", overlay(APT_CONTAINER))[0]


def test_gpu_04_sees_a_bundle_enabled_by_hand(check) -> None:
    bad = overlay(host={"os": "apt", "nvidiaDriver": True},
                  platform={"variant": "isp-full-generic",
                            "values": {"bundles": {"enabledPackages": ["cozystack.gpu-operator"]}}})
    found, ov = check("GPU-04", bad)
    assert one(found).location == ov.locate(("platform", "values", "bundles", "enabledPackages", 0))


def test_gpu_05_vgpu_on_talos(check) -> None:
    found, ov = check("GPU-05", overlay(TALOS, VGPU))
    f = one(found)
    assert f.message == "vGPU is not supported on Talos (proprietary vGPU Manager cannot be redistributed)."
    assert f.location == ov.locate(("gpu", "variant"))
    assert not check("GPU-05", overlay(TALOS, gpu={"variant": "default"}))[0]
    assert not check("GPU-05", overlay(VGPU))[0]


def test_gpu_05_refusal_exits_3_from_render(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": json.dumps(overlay(TALOS, VGPU), indent=2)})
    with pytest.raises(RenderError) as caught:
        render(root / "clusters" / "c1")
    assert caught.value.exit_code == 3
    assert [f.code for f in caught.value.findings if f.severity == ERROR] == ["GPU-05"]


def test_gpu_06_container_package_by_hand_on_talos(check) -> None:
    bad = overlay(TALOS, packages={"cozystack.gpu-operator": {"variant": "container"}})
    found, ov = check("GPU-06", bad)
    assert one(found, WARNING).location == ov.locate(("packages", "cozystack.gpu-operator", "variant"))
    assert not check("GPU-06", overlay(TALOS, gpu={"variant": "container"}))[0]


def test_gpu_07_talos_overlay_without_companions(check) -> None:
    bad = overlay(TALOS, packages={"cozystack.gpu-operator": {
        "variant": "default", "components": {"gpu-operator": {"values": TALOS_NATIVE_VALUES}}}})
    found, ov = check("GPU-07", bad)
    assert sorted(f.message.split("incomplete: ")[1].split()[0] for f in found) == [
        "ConfigMap", "DaemonSet"], [f.format() for f in found]
    assert all(f.severity == ERROR for f in found)
    values = ("packages", "cozystack.gpu-operator", "components", "gpu-operator", "values", "gpu-operator")
    assert {f.location for f in found} == {ov.locate(values + ("hostPaths", "driverInstallDir")),
                                           ov.locate(values + ("dcgmExporter", "config", "name"))}
    assert not check("GPU-07", overlay(TALOS, gpu={"variant": "container"}))[0]


def test_gpu_08_driver_install_dir_on_apt(check) -> None:
    bad = overlay(APT_CONTAINER, gpu={"variant": "container", "values": {
        "gpu-operator": {"hostPaths": {"driverInstallDir": "/var/nvidia-driver"}}}})
    found, ov = check("GPU-08", bad)
    assert one(found, WARNING).location == ov.locate(("gpu", "values", "gpu-operator", "hostPaths",
                                                      "driverInstallDir"))
    assert not check("GPU-08", overlay(APT_CONTAINER))[0]


def test_gpu_09_leftover_workload_label(check) -> None:
    nodes = [{"name": "gpu-1", "labels": {"nvidia.com/gpu.workload.config": "vm-passthrough"}},
             {"name": "gpu-2", "labels": {"nvidia.com/gpu.workload.config": "container"}},
             {"name": "cpu-1", "labels": {}}]
    bad = overlay(APT_CONTAINER, host={**APT_CONTAINER["host"], "nodes": nodes})
    found, ov = check("GPU-09", bad)
    f = one(found)
    assert "gpu-1" in f.message
    assert f.location == ov.locate(("host", "nodes", 0, "labels", "nvidia.com/gpu.workload.config"))
    # Talos native overlay turns sandbox workloads off too.
    assert check("GPU-09", overlay(TALOS, host={"os": "talos", "nodes": nodes}, gpu={"variant": "container"}))[0]
    assert not check("GPU-09", overlay(APT_CONTAINER))[0]  # no node facts: skipped
    assert not check("GPU-09", overlay(host={"os": "apt", "nodes": nodes}, gpu={"variant": "default"}))[0]


def test_gpu_10_runtime_not_registered(check) -> None:
    found, ov = check("GPU-10", overlay(host={"os": "apt", "nvidiaDriver": True}, gpu={"variant": "container"}))
    assert one(found, WARNING).location == ov.locate(("gpu", "variant"))
    found, ov = check("GPU-10", overlay(host={"os": "apt", "nvidiaContainerRuntime": False},
                                        gpu={"variant": "container"}))
    assert one(found, WARNING).location == ov.locate(("host", "nvidiaContainerRuntime"))
    assert not check("GPU-10", overlay(APT_CONTAINER))[0]


def test_gpu_11_vgpu_manager_image_required(check) -> None:
    found, ov = check("GPU-11", overlay(gpu={"variant": "vgpu"}))
    f = one(found)
    assert "repository, version" in f.message and f.location == ov.locate(("gpu", "variant"))
    found, ov = check("GPU-11", overlay(gpu={"variant": "vgpu", "vgpuManager": {"repository": "r.example.com"}}))
    f = one(found)
    assert "missing: version" in f.message and f.location == ov.locate(("gpu", "vgpuManager"))
    assert not check("GPU-11", overlay(VGPU))[0]


def test_gpu_11_hand_written_vgpu_package(check) -> None:
    found, _ = check("GPU-11", overlay(packages={"cozystack.gpu-operator": {"variant": "vgpu"}}))
    assert "gpu-operator.vgpuManager.repository and .version" in one(found).message
    good = overlay(packages={"cozystack.gpu-operator": {"variant": "vgpu", "components": {"gpu-operator": {
        "values": {"gpu-operator": {"vgpuManager": VGPU_MANAGER}}}}}})
    assert not check("GPU-11", good)[0]


def test_gpu_12_image_pull_secrets_are_strings(check) -> None:
    bad = overlay(gpu={"variant": "vgpu", "vgpuManager": {**VGPU_MANAGER, "imagePullSecrets": [
        "ok", {"name": "nvidia-registry-secret"}]}})
    found, ov = check("GPU-12", bad)
    assert one(found).location == ov.locate(("gpu", "vgpuManager", "imagePullSecrets", 1))
    assert not check("GPU-12", overlay(VGPU))[0]


@pytest.mark.parametrize("model, fires", [("L40S", True), ("NVIDIA L4", True), ("b100", True),
                                          ("A100", False), ("T4", False), ("RTX 6000", False)])
def test_gpu_13_device_manager_on_sriov_generation(check, model: str, fires: bool) -> None:
    found, ov = check("GPU-13", overlay(VGPU, host={"os": "apt", "gpuModel": model}))
    if fires:
        assert one(found, WARNING).location == ov.locate(("gpu", "vgpuDeviceManager", "enabled"))
    else:
        assert not found


def test_gpu_13_skipped_without_model_or_with_manager_off(check) -> None:
    assert not check("GPU-13", overlay(VGPU))[0]
    off = overlay(VGPU, host={"os": "apt", "gpuModel": "L40S"})
    off["gpu"]["vgpuDeviceManager"] = {"enabled": False}
    assert not check("GPU-13", off)[0]


def test_gpu_14_passthrough_with_defaults_replaced_and_nothing_listed(check) -> None:
    found, ov = check("GPU-14", overlay(gpu={"variant": "default", "replaceDefaults": True}))
    assert one(found, ERROR).location == ov.locate(("gpu", "replaceDefaults"))
    listed = overlay(gpu={"variant": "default", "replaceDefaults": True, "permittedHostDevices": {
        "pciHostDevices": [{"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10"}]}})
    assert not check("GPU-14", listed)[0]
    # mediatedDevices do not count in passthrough
    mdev_only = overlay(gpu={"variant": "default", "replaceDefaults": True, "permittedHostDevices": {
        "mediatedDevices": [{"mdevNameSelector": "NVIDIA A10-24Q", "resourceName": "nvidia.com/A10-24Q"}]}})
    assert one(check("GPU-14", mdev_only)[0], ERROR)
    assert not check("GPU-14", overlay(gpu={"variant": "default"}))[0]


def test_gpu_14_vgpu_out_of_the_box_is_a_warning(check) -> None:
    found, ov = check("GPU-14", overlay(gpu={"variant": "vgpu", "vgpuManager": VGPU_MANAGER}))
    assert one(found, WARNING).location == ov.locate(("gpu", "variant"))
    assert not check("GPU-14", overlay(VGPU))[0]  # device manager on: the mdev table flows
    sriov = overlay(gpu={"variant": "vgpu", "vgpuManager": VGPU_MANAGER, "permittedHostDevices": {
        "pciHostDevices": [{"pciVendorSelector": "10DE:26B9", "resourceName": "nvidia.com/L40S-24Q"}]}})
    assert not check("GPU-14", sriov)[0]


def test_gpu_15_duplicate_default_selector(check) -> None:
    # The docs' own "Extending" example (W:virtualization/gpu.md; reference examples/
    # gpu-platform-values-permitted-host-devices.yaml), given in platform values.
    docs = {"replaceDefaults": False, "permittedHostDevices": {"pciHostDevices": [
        {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10",
         "externalResourceProvider": True}]}}
    bad = overlay(platform={"variant": "isp-full-generic", "values": {"gpu": docs}}, gpu={"variant": "default"})
    found, ov = check("GPU-15", bad)
    f = one(found, WARNING)
    assert "10DE:2236" in f.message
    assert f.location == ov.locate(("platform", "values", "gpu", "permittedHostDevices", "pciHostDevices", 0,
                                    "pciVendorSelector"))
    replaced = copy.deepcopy(bad)
    replaced["platform"]["values"]["gpu"]["replaceDefaults"] = True
    assert not check("GPU-15", replaced)[0]
    other = overlay(gpu={"variant": "default", "permittedHostDevices": {"pciHostDevices": [
        {"pciVendorSelector": "10de:1234", "resourceName": "nvidia.com/OTHER"}]}})
    assert not check("GPU-15", other)[0]


def test_gpu_16_vgpu_keys_in_passthrough(check) -> None:
    bad = overlay(gpu={"variant": "default", "mediatedDevicesConfiguration": {"mediatedDeviceTypes": ["nvidia-593"]}})
    found, ov = check("GPU-16", bad)
    assert one(found, WARNING).location == ov.locate(("gpu", "mediatedDevicesConfiguration"))
    empty = overlay(gpu={"variant": "default", "mediatedDevicesConfiguration": {},
                         "permittedHostDevices": {"mediatedDevices": []}})
    assert not check("GPU-16", empty)[0]
    assert not check("GPU-16", overlay(VGPU, gpu={**VGPU["gpu"], "mediatedDevicesConfiguration": {
        "mediatedDeviceTypes": ["nvidia-593"]}}))[0]


def test_gpu_17_knobs_without_effect(check) -> None:
    found, ov = check("GPU-17", overlay(gpu={"variant": "default", "vgpuManager": VGPU_MANAGER}))
    assert one(found, WARNING).location == ov.locate(("gpu", "vgpuManager"))
    found, ov = check("GPU-17", overlay(APT_CONTAINER, gpu={"variant": "container", "replaceDefaults": True}))
    assert one(found, WARNING).location == ov.locate(("gpu", "replaceDefaults"))
    found, ov = check("GPU-17", overlay(gpu={"variant": "none", "values": {"gpu-operator": {}}}))
    assert one(found, WARNING).location == ov.locate(("gpu", "values"))
    assert not check("GPU-17", overlay(VGPU))[0]
    assert not check("GPU-17", overlay(gpu={"variant": "default", "replaceDefaults": False}))[0]


def test_gpu_18_manual_passthrough_package_without_kubevirt_wiring(check) -> None:
    bad = overlay(packages={"cozystack.gpu-operator": {"variant": "default"}})
    found, ov = check("GPU-18", bad)
    assert one(found, WARNING).location == ov.locate(("packages", "cozystack.gpu-operator", "variant"))
    # The docs' manual wiring (reference examples/kubevirt-package-manual-gpu-wiring.yaml, W:virtualization/gpu.md).
    wired = copy.deepcopy(bad)
    wired["packages"]["cozystack.kubevirt"] = {"variant": "default", "components": {"kubevirt": {"values": {
        "extraFeatureGates": ["HostDevices"],
        "permittedHostDevices": {"pciHostDevices": [{"pciVendorSelector": "10DE:2236",
                                                     "resourceName": "nvidia.com/GA102GL_A10",
                                                     "externalResourceProvider": True}]}}}}}
    assert not check("GPU-18", wired)[0]
    assert not check("GPU-18", overlay(TALOS, gpu={"variant": "container"}))[0]  # pods, not VMs
    assert not check("GPU-18", overlay(gpu={"variant": "default"}))[0]  # the platform wires the bundle route


def _licensing(variant: str, **config: str) -> dict[str, Any]:
    return overlay(packages={"cozystack.gpu-operator": {"variant": variant, "components": {"gpu-operator": {
        "values": {"gpu-operator": {"vgpuManager": VGPU_MANAGER, "driver": {"licensingConfig": config}}}}}}})


def test_gpu_19_host_licensing_secret_with_vgpu(check) -> None:
    found, ov = check("GPU-19", _licensing("vgpu", secretName="licensing"))
    assert one(found, WARNING).location == ov.locate((
        "packages", "cozystack.gpu-operator", "components", "gpu-operator", "values", "gpu-operator", "driver",
        "licensingConfig", "secretName"))
    assert not check("GPU-19", _licensing("default", secretName="licensing"))[0]


def test_gpu_20_deprecated_config_map_name(check) -> None:
    found, _ = check("GPU-20", _licensing("default", configMapName="licensing"))
    assert "deprecated" in one(found, WARNING).message
    assert not check("GPU-20", _licensing("default", secretName="licensing"))[0]


def _vm(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "VMInstance",
            "metadata": {"name": "gpu-vm", "namespace": "tenant-example"},
            "spec": {"gpus": [{"name": "nvidia.com/GA102GL_A10"}], **spec}}


def test_gpu_21_gpu_vm_with_little_memory(check) -> None:
    found, ov = check("GPU-21", overlay(manifests=[_vm(resources={"memory": "2Gi"})]))
    f = one(found, WARNING)
    assert "VMInstance tenant-example/gpu-vm has 2Gi" in f.message
    assert f.location == ov.locate(("manifests", 0, "spec", "resources", "memory"))
    assert not check("GPU-21", overlay(manifests=[_vm(resources={"memory": "4Gi"})]))[0]
    assert not check("GPU-21", overlay(manifests=[_vm(instanceType="u1.medium")]))[0]  # unknown size: skipped
    no_gpu = _vm(resources={"memory": "1Gi"})
    no_gpu["spec"].pop("gpus")
    assert not check("GPU-21", overlay(manifests=[no_gpu]))[0]


@pytest.mark.parametrize("quantity, size", [("4Gi", 4 * 2**30), ("4096Mi", 4 * 2**30), ("2G", 2e9),
                                            (1024, 1024), ("1.5Gi", 1.5 * 2**30), ("lots", None), (True, None)])
def test_memory_quantities(quantity: Any, size: float | None) -> None:
    assert memory_bytes(quantity) == size


# --- HAMi --------------------------------------------------------------------------------------


def test_hami_01_on_the_container_variant(check) -> None:
    found, ov = check("HAMI-01", overlay(APT_CONTAINER, gpu={"variant": "container", "hami": True}))
    f = one(found)
    assert "both device plugins" in f.message and "tenant" in f.message
    assert f.location == ov.locate(("gpu", "hami"))
    assert check("HAMI-01", overlay(TALOS, gpu={"variant": "container", "hami": True}))[0]
    assert not check("HAMI-01", overlay(gpu={"variant": "default", "hami": True}))[0]
    assert not check("HAMI-01", overlay(APT_CONTAINER))[0]


def test_hami_02_without_a_gpu_operator(check) -> None:
    found, ov = check("HAMI-02", overlay(gpu={"variant": "none", "hami": True}))
    assert one(found).location == ov.locate(("gpu", "hami"))
    by_hand = overlay(platform={"variant": "isp-full-generic",
                                "values": {"bundles": {"enabledPackages": ["cozystack.hami"]}}})
    found, ov = check("HAMI-02", by_hand)
    assert one(found).location == ov.locate(("platform", "values", "bundles", "enabledPackages", 0))
    assert not check("HAMI-02", overlay(gpu={"variant": "vgpu", "hami": True, **{
        k: v for k, v in VGPU["gpu"].items() if k != "variant"}}))[0]


def test_hami_03_tenant_cluster_needs_the_gpu_operator_addon(check) -> None:
    # W:kubernetes/gpu-sharing.md L35-52 (tests/resolve/features/data/tenant-kubernetes-gpu-operator-hami.yaml)
    tenant = {"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Kubernetes",
              "metadata": {"name": "my-cluster", "namespace": "tenant-example"},
              "spec": {"addons": {"gpuOperator": {"enabled": True}, "hami": {"enabled": True}}}}
    assert not check("HAMI-03", overlay(manifests=[tenant]))[0]
    tenant["spec"]["addons"]["gpuOperator"]["enabled"] = False
    found, ov = check("HAMI-03", overlay(manifests=[tenant]))
    f = one(found)
    assert f.message == "addons.hami requires addons.gpuOperator to be enabled"
    assert f.location == ov.locate(("manifests", 0, "spec", "addons", "hami", "enabled"))


def test_hami_03_documented_tenant_file_passes(repo) -> None:
    text = (Path(__file__).parents[2] / "resolve" / "features" / "data" / "tenant-kubernetes-gpu-operator-hami.yaml").read_text()
    root = repo({"clusters/c1/cluster.yaml": json.dumps(overlay(manifests=["tenant.yaml"]), indent=2),
                 "clusters/c1/tenant.yaml": text})
    assert not run_rules(emit_overlay(load_overlay(root / "clusters" / "c1")), only=["HAMI-03"])
    root = repo({"clusters/c1/tenant.yaml": text.replace("gpuOperator:\n      enabled: true",
                                                         "gpuOperator:\n      enabled: false")})
    found = run_rules(emit_overlay(load_overlay(root / "clusters" / "c1")), only=["HAMI-03"])
    assert one(found).location.path.endswith("tenant.yaml")
