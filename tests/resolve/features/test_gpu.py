"""GPU feature: each host x gpu.variant route renders what Cozystack documents (issue 3 acceptance).

The expected objects are the Cozystack examples copied byte for byte into tests/resolve/features/data/
(sources and licence in data/README.md); they are compared semantically with the render, ignoring
only the two labels cozy-render adds to every object.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from renderer.errors import RenderError
from renderer.model import CLUSTER_LABEL, MANAGED_BY_LABEL
from tests.conftest import BASE_OVERLAY, OVERLAYS
from tests.helpers import emit_overlay, render

DATA = Path(__file__).parent / "data"

# sha256 column of the reference's examples/README.md: the fixtures are the documented text.
FIXTURE_SHA256 = {
    "gpu-operator-container-package.yaml": "fedfb318c476b3b427a03d2b657008d3714182d1a1c0461827a4e5f86749dbb0",
    "gpu-operator-values-native-talos-package.yaml":
        "27ab7c16f2366d569b53a775134d99350d54805027c17bb9596fb151ed57a7d9",
    "gpu-operator-talos-nvidia-driver-compat-daemonset.yaml":
        "f88d9af59630215b5b5c839989ea7000a52b845f0631f88dda6a49689c7b5a9e",
    "gpu-operator-talos-dcgm-custom-metrics-configmap.yaml":
        "34c72d46f200e9dde607af730166a0bcc6396aa4e2efd72bb9f2cc86b2ec3bed",
    "vgpu-platform-values.yaml": "1cdf0dc903b724acce784de34779accc1fde41fa99d9fd1fb65cbb049354f4b3",
    "tenant-kubernetes-gpu-operator-hami.yaml": "4b2d5afcb74709d2765fb956812bfec908d6447ffc656ffde6814b1fb25e97d6",
}


def example(name: str) -> Any:
    return YAML(typ="safe").load((DATA / name).read_text(encoding="utf-8"))


def without_our_labels(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    assert labels.pop(MANAGED_BY_LABEL) == "cozy-render"
    assert labels.pop(CLUSTER_LABEL)
    if not labels:
        meta.pop("labels")
    return obj


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind} {name}: {len(matches)} rendered"
    return matches[0]


def platform_values(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return find(objects, "Package", "cozystack.cozystack-platform")["spec"]["components"]["platform"]["values"]


def render_sample(name: str) -> list[dict[str, Any]]:
    return render(OVERLAYS / "clusters" / name).manifests


BASE = BASE_OVERLAY


def overlay(**sections: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(copy.deepcopy(sections))
    return data


@pytest.fixture
def render_overlay(repo):
    """Render one overlay given as data (JSON is YAML); returns the manifests."""

    def run(data: dict[str, Any], **kwargs: Any) -> list[dict[str, Any]]:
        root = repo({"clusters/c1/cluster.yaml": json.dumps(data, indent=2)})
        return render(root / "clusters" / "c1", **kwargs).manifests

    return run


def test_fixtures_are_the_documented_examples() -> None:
    for name, digest in FIXTURE_SHA256.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


# --- the four sample clusters, one per route --------------------------------------------------


def test_apt_container_route_is_the_documented_package() -> None:
    objects = render_sample("gpu-apt-01")
    package = find(objects, "Package", "cozystack.gpu-operator")
    assert without_our_labels(package) == example("gpu-operator-container-package.yaml")
    bundles = platform_values(objects)["bundles"]
    assert bundles["disabledPackages"] == ["cozystack.gpu-operator"]
    assert "cozystack.gpu-operator" not in bundles.get("enabledPackages", [])
    assert "iaas" not in bundles  # gpuOperatorVariant stays at the chart default (never "container")


def test_talos_native_route_is_the_documented_trio() -> None:
    objects = render_sample("gpu-talos-01")
    assert without_our_labels(find(objects, "Package", "cozystack.gpu-operator")) == \
        example("gpu-operator-values-native-talos-package.yaml")
    assert without_our_labels(find(objects, "DaemonSet", "nvidia-driver-compat")) == \
        example("gpu-operator-talos-nvidia-driver-compat-daemonset.yaml")
    assert without_our_labels(find(objects, "ConfigMap", "dcgm-custom-metrics")) == \
        example("gpu-operator-talos-dcgm-custom-metrics-configmap.yaml")
    bundles = platform_values(objects)["bundles"]
    assert "cozystack.gpu-operator" in bundles["disabledPackages"]  # (hubble: own adds cozystack.networking)
    assert "cozystack.gpu-operator" not in bundles.get("enabledPackages", [])


def test_vgpu_bundle_route_is_the_documented_platform_values() -> None:
    objects = render_sample("vgpu-apt-01")
    values = platform_values(objects)
    documented = example("vgpu-platform-values.yaml")
    # The docs also set bundles.iaas.enabled: true, which the platform variant already controls and
    # which breaks isp-hosted renders (reference (h)); everything else is the documented block.
    assert documented["bundles"]["iaas"].pop("enabled") is True
    assert values["bundles"]["iaas"] == documented["bundles"]["iaas"]
    assert values["bundles"]["enabledPackages"] == documented["bundles"]["enabledPackages"]
    assert values["gpu"]["vgpuManager"] == documented["gpu"]["vgpuManager"]
    assert values["gpu"]["vgpuDeviceManager"] == {"enabled": True}
    # The platform chart renders cozystack.gpu-operator itself on this route.
    assert not [o for o in objects if o["metadata"]["name"] == "cozystack.gpu-operator"]


def test_passthrough_bundle_route() -> None:
    objects = render_sample("gpu-passthrough-01")
    values = platform_values(objects)
    assert values["bundles"] == {"iaas": {"gpuOperatorVariant": "default"},
                                 "enabledPackages": ["cozystack.gpu-operator"]}
    assert "gpu" not in values
    assert [o["kind"] for o in objects] == ["Package"]


# --- route details -----------------------------------------------------------------------------


def test_variant_none_renders_nothing_gpu_related(render_overlay) -> None:
    plain = render_overlay(overlay())
    assert render_overlay(overlay(gpu={"variant": "none"})) == plain
    assert render_overlay(overlay(gpu={"hami": False})) == plain


def test_bundle_route_forwards_knobs_where_the_chart_reads_them(render_overlay) -> None:
    knobs = {
        "replaceDefaults": True,
        "permittedHostDevices": {"pciHostDevices": [{"pciVendorSelector": "10DE:26B9",
                                                     "resourceName": "nvidia.com/L40S-24Q"}],
                                 "mediatedDevices": []},
        "mediatedDevicesConfiguration": {"mediatedDeviceTypes": ["nvidia-593"]},
        "vgpuManager": {"repository": "registry.example.com/nvidia", "version": "595.58.02-ubuntu24.04",
                        "imagePullSecrets": ["nvidia-registry-secret"]},
        "vgpuDeviceManager": {"enabled": False},
    }
    objects = render_overlay(overlay(gpu={"variant": "vgpu", **knobs}))
    assert platform_values(objects)["gpu"] == knobs


def test_gpu_knobs_merge_over_platform_values_gpu(render_overlay) -> None:
    data = overlay(
        platform={"variant": "isp-full-generic", "values": {"gpu": {
            "vgpuManager": {"repository": "old.example.com", "image": "custom-manager"},
            "permittedHostDevices": {"pciHostDevices": [{"pciVendorSelector": "10DE:0001"}]}}}},
        gpu={"variant": "vgpu", "vgpuManager": {"repository": "registry.example.com/nvidia", "version": "1"},
             "permittedHostDevices": {"pciHostDevices": [{"pciVendorSelector": "10DE:26B9",
                                                          "resourceName": "nvidia.com/L40S-24Q"}]}},
    )
    gpu = platform_values(render_overlay(data))["gpu"]
    # maps merge (image kept), lists replace (the platform.values entry is gone)
    assert gpu["vgpuManager"] == {"repository": "registry.example.com/nvidia", "image": "custom-manager",
                                  "version": "1"}
    assert gpu["permittedHostDevices"]["pciHostDevices"] == [{"pciVendorSelector": "10DE:26B9",
                                                              "resourceName": "nvidia.com/L40S-24Q"}]


def test_bundle_route_never_sets_iaas_enabled(render_overlay) -> None:
    values = platform_values(render_overlay(overlay(gpu={"variant": "default"})))
    assert "enabled" not in values["bundles"]["iaas"]


def test_container_route_knobs_are_not_forwarded(render_overlay) -> None:
    objects = render_overlay(overlay(host={"os": "apt", "nvidiaContainerRuntime": True},
                                     gpu={"variant": "container", "replaceDefaults": True}))
    assert "gpu" not in platform_values(objects)


def test_gpu_values_merge_into_the_container_package(render_overlay) -> None:
    extra = {"gpu-operator": {"dcgmExporter": {"serviceMonitor": {"enabled": True}}}}
    objects = render_overlay(overlay(host={"os": "apt", "nvidiaContainerRuntime": True},
                                     gpu={"variant": "container", "values": extra}))
    spec = find(objects, "Package", "cozystack.gpu-operator")["spec"]
    assert spec == {"variant": "container", "components": {"gpu-operator": {"values": extra}}}


def test_gpu_values_merge_into_the_talos_native_package(render_overlay) -> None:
    data = overlay(host={"os": "talos"}, platform={"variant": "isp-full"},
                   gpu={"variant": "container",
                        "values": {"gpu-operator": {"dcgmExporter": {"serviceMonitor": {"interval": "30s"}}}}})
    values = find(render_overlay(data), "Package", "cozystack.gpu-operator")["spec"]["components"]["gpu-operator"][
        "values"]["gpu-operator"]
    documented = example("gpu-operator-values-native-talos-package.yaml")["spec"]["components"]["gpu-operator"][
        "values"]["gpu-operator"]
    documented["dcgmExporter"]["serviceMonitor"]["interval"] = "30s"
    assert values == documented


def test_hami_is_enabled_next_to_a_bundle_operator(render_overlay) -> None:
    bundles = platform_values(render_overlay(overlay(gpu={"variant": "default", "hami": True})))["bundles"]
    assert bundles["enabledPackages"] == ["cozystack.gpu-operator", "cozystack.hami"]


def test_user_variants_folder_overrides_a_route_template(render_overlay, tmp_path: Path) -> None:
    mine = tmp_path / "my-variants" / "gpu"
    mine.mkdir(parents=True)
    (mine / "container-package.yaml").write_text(
        "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n  name: cozystack.gpu-operator\n"
        "  annotations: {team: gpu}\nspec:\n  variant: container\n")
    objects = render_overlay(overlay(host={"os": "apt", "nvidiaContainerRuntime": True},
                                     gpu={"variant": "container"}), variants=tmp_path / "my-variants")
    assert find(objects, "Package", "cozystack.gpu-operator")["metadata"]["annotations"] == {"team": "gpu"}


# --- refusals inside the overlay itself (OVL-GPU) ---------------------------------------------


@pytest.mark.parametrize("data, needle", [
    (overlay(platform={"variant": "isp-hosted"}, gpu={"variant": "vgpu"}),
     "platform variant isp-hosted does not render"),
    (overlay(platform={"variant": "default"}, gpu={"variant": "default"}),
     "platform variant default does not render"),
    (overlay(platform={"variant": "isp-full-generic",
                       "values": {"bundles": {"iaas": {"gpuOperatorVariant": "default"}}}}, gpu={"variant": "vgpu"}),
     "contradicts gpu.variant: vgpu"),
    (overlay(platform={"variant": "isp-full-generic",
                       "values": {"bundles": {"disabledPackages": ["cozystack.gpu-operator"]}}},
             gpu={"variant": "default"}),
     "disabled wins"),
    (overlay(gpu={"variant": "default", "values": {"gpu-operator": {}}}), "gpu.values applies to"),
])
def test_overlay_contradictions_are_refused(render_overlay, data: dict[str, Any], needle: str) -> None:
    with pytest.raises(RenderError) as caught:
        render_overlay(data)
    (finding,) = caught.value.findings
    assert finding.code == "OVL-GPU" and needle in finding.message
    assert finding.location is not None and finding.location.line > 0
    assert caught.value.exit_code == 3


@pytest.mark.parametrize("data, needle", [
    (overlay(platform={"variant": "isp-full-generic", "values": {"gpu": "on"}},
             gpu={"variant": "default", "replaceDefaults": True}), "platform.values.gpu must be an object"),
    (overlay(platform={"variant": "isp-full-generic", "values": {"bundles": {"iaas": "on"}}},
             gpu={"variant": "default"}), "platform.values.bundles.iaas must be an object"),
])
def test_platform_values_the_gpu_route_writes_into_must_be_mappings(render_overlay, data: dict[str, Any],
                                                                     needle: str) -> None:
    with pytest.raises(RenderError) as caught:
        render_overlay(data)
    (finding,) = caught.value.findings
    assert finding.code == "OVL-SCHEMA" and needle in finding.message


def test_refusal_points_at_the_line_that_chose_the_variant(repo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    text = """apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
metadata:
  name: talos-vgpu
host:
  os: talos
platform:
  variant: isp-full
gpu:
  vgpuManager: {repository: registry.example.com/nvidia, version: "1"}
  vgpuDeviceManager: {enabled: true}
  variant: vgpu
"""
    root = repo({"clusters/talos-vgpu/cluster.yaml": text})
    monkeypatch.chdir(root)
    code, out, err = cli("render", "clusters/talos-vgpu")
    assert code == 3 and out == ""
    assert re.fullmatch(r"clusters/talos-vgpu/cluster\.yaml:12:12: error\[GPU-05\]: vGPU is not supported on "
                        r"Talos \(proprietary vGPU Manager cannot be redistributed\)\.\n", err), err


def test_every_gpu_and_hami_rule_is_registered_and_explained(cli) -> None:
    from renderer.check.rules import all_rules

    registry = all_rules()
    wanted = [f"GPU-{n:02d}" for n in range(1, 22)] + ["HAMI-01", "HAMI-02", "HAMI-03"]
    for rule_id in wanted:
        r = registry[rule_id]
        assert r.summary and r.explanation and r.sources, rule_id
    code, out, _ = cli("rules", "GPU-03")
    assert code == 0
    assert 'bundles.iaas.gpuOperatorVariant' in out and "iaas.yaml L41-43" in out


# --- platform rules where they touch GPU rendering (PLT-03/04/05/07 live in rules/platform.py) ------


@pytest.fixture
def check_overlay(repo):
    """Run the rules over an overlay given as data; returns {rule id: [finding, ...]}."""
    from renderer.check.rules import run_rules
    from renderer.load.overlay import load_overlay

    def run(data: dict[str, Any]) -> dict[str, list[Any]]:
        root = repo({"clusters/c1/cluster.yaml": json.dumps(data, indent=2)})
        out: dict[str, list[Any]] = {}
        for f in run_rules(emit_overlay(load_overlay(root / "clusters" / "c1"))):
            out.setdefault(f.code, []).append(f)
        return out

    return run


def test_container_route_over_a_shared_enable_warns_plt_07(check_overlay) -> None:
    data = overlay(host={"os": "apt", "nvidiaContainerRuntime": True}, gpu={"variant": "container"},
                   platform={"variant": "isp-full-generic",
                             "values": {"bundles": {"enabledPackages": ["cozystack.gpu-operator"]}}})
    found = check_overlay(data)
    assert [f.severity for f in found["PLT-07"]] == ["warning"]
    assert "GPU-02" not in found  # disabled wins: the platform renders no second copy


def test_gpu_operator_variant_container_is_reported_once(check_overlay) -> None:
    data = overlay(platform={"variant": "isp-full-generic",
                             "values": {"bundles": {"iaas": {"gpuOperatorVariant": "container"}}}})
    found = check_overlay(data)
    assert len(found["GPU-03"]) == 1 and "PLT-03" not in found
    data["platform"]["values"]["bundles"]["iaas"]["gpuOperatorVariant"] = "passthrough"
    found = check_overlay(data)
    assert "GPU-03" not in found
    assert found["PLT-03"][0].message == 'bundles.iaas.gpuOperatorVariant must be "default" or "vgpu", got "passthrough"'


def test_documented_vgpu_values_fail_on_isp_hosted_with_plt_04(check_overlay) -> None:
    # The vgpu docs' block sets bundles.iaas.enabled: true; on isp-hosted the chart's iaas guard fails.
    documented = example("vgpu-platform-values.yaml")
    data = overlay(platform={"variant": "isp-hosted", "values": {"bundles": documented["bundles"]}},
                   gpu={"variant": "vgpu", "vgpuManager": documented["gpu"]["vgpuManager"]})
    found = check_overlay(data)
    assert [f.severity for f in found["PLT-04"]] == ["error"]
    assert "OVL-GPU" not in found and "GPU-03" not in found


def test_iaas_forced_on_without_the_system_bundle_fails_plt_05(check_overlay) -> None:
    data = overlay(platform={"variant": "default", "version": "main-3c780ac",  # v1.6.2 has no such guard
                             "values": {"bundles": {"iaas": {"enabled": True}}}},
                   gpu={"variant": "default"})
    found = check_overlay(data)
    assert found["PLT-05"][0].message.startswith(
        "bundles.iaas.enabled requires bundles.system.enabled: the iaas bundle depends on")
