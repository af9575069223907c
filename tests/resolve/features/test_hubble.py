"""Hubble feature and HUB-* rules (issue 4): patch vs own, the platform-exact networking object.

Overlays are written as JSON (valid YAML) into a throw-away repo. Expected values are the Cozystack
examples, copied below with their source.
"""

from __future__ import annotations

from typing import Any

import pytest
from ruamel.yaml import YAML

from renderer.check.rules import run_rules
from renderer.errors import ERROR, WARNING, Finding, RenderError
from renderer.load.overlay import load_overlay
from renderer.model import (
    ARGO_SYNC_OPTIONS,
    ARGO_SYNC_WAVE,
    CLUSTER_LABEL,
    FLUX_PRUNE,
    MANAGED_BY_LABEL,
    OWNERSHIP_ANNOTATION,
)
from renderer.resolve.features.hubble import go_url_host
from tests.conftest import OVERLAYS, overlay_doc
from tests.helpers import emit_overlay, render

# examples/hubble-cilium-values.yaml: cozystack/website content/en/docs/next/networking/hubble.md
# L22-37 @ aa0d9e1be37f3ab18e663c092f39c09e444c739f (Apache-2.0), verbatim.
HUBBLE_EXAMPLE = """\
cilium:
  hubble:
    enabled: true
    relay:
      enabled: true
    ui:
      enabled: true
    metrics:
      enabled:
        - dns
        - drop
        - tcp
        - flow
        - port-distribution
        - icmp
        - httpV2:exemplars=true;labelsContext=source_ip,source_namespace,source_workload,destination_ip,destination_namespace,destination_workload,traffic_direction
"""

# Reference section (e) "Derived shape" of the whole cozystack.networking on an isp-full cluster with
# Hubble (reference section (b) for the platform-rendered keys), as main-3c780ac's system.yaml renders
# it; v1.6.2 (the default) does not thread gateway.http2 (ISP_FULL_NETWORKING_SPEC_V1_6_2).
ISP_FULL_NETWORKING_SPEC = """\
variant: kubeovn-cilium
components:
  kubeovn:
    values: {kube-ovn: {ipv4: {POD_CIDR: 10.244.0.0/16, POD_GATEWAY: 10.244.0.1, SVC_CIDR: 10.96.0.0/16, JOIN_CIDR: 100.64.0.0/16}}}
  cilium:
    values:
      cilium:
        k8sServiceHost: localhost
        k8sServicePort: "7445"
        cgroup: {autoMount: {enabled: false}}
        gatewayAPI: {enableAlpn: true}
        hubble:
          enabled: true
          relay: {enabled: true}
          ui: {enabled: true}
          metrics:
            enabled: [dns, drop, tcp, flow, port-distribution, icmp, "httpV2:exemplars=true;labelsContext=source_ip,source_namespace,source_workload,destination_ip,destination_namespace,destination_workload,traffic_direction"]
            serviceMonitor: {enabled: true}
"""

ISP_FULL_NETWORKING_SPEC_V1_6_2 = ISP_FULL_NETWORKING_SPEC.replace("        gatewayAPI: {enableAlpn: true}\n", "")
MAIN = {"platform": {"variant": "isp-full", "version": "main-3c780ac"}}

BASE = {
    "apiVersion": "render.cozystack.io/v1alpha1",
    "kind": "ClusterOverlay",
    "metadata": {"name": "c1"},
    "host": {"os": "apt"},
    "platform": {"variant": "isp-full-generic",
                 "values": {"publishing": {"apiServerEndpoint": "https://api.example.org:443"}}},
    "hubble": {"enabled": True},
}
TALOS = {"host": {"os": "talos"}, "platform": {"variant": "isp-full"}}


def yaml(text: str) -> Any:
    return YAML(typ="safe").load(text)


def recommended() -> dict[str, Any]:
    values = yaml(HUBBLE_EXAMPLE)["cilium"]["hubble"]
    values["metrics"]["serviceMonitor"] = {"enabled": True}  # the one documented gap we close (HUB-04)
    return values


def overlay(*parts: dict[str, Any]) -> dict[str, Any]:
    return overlay_doc(BASE, *parts)


@pytest.fixture
def rendered(cluster):
    def run(data: dict[str, Any]) -> list[dict[str, Any]]:
        return render(cluster(data)).manifests

    return run


@pytest.fixture
def check(cluster):
    """Emit, then run only the given rules; returns findings from the feature and those rules."""

    def run(data: dict[str, Any], *rules: str) -> list[Finding]:
        result = emit_overlay(load_overlay(cluster(data)))
        return result.findings + run_rules(result, only=rules)

    return run


def networking(objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = [o for o in objects if o["kind"] == "Package" and o["metadata"]["name"] == "cozystack.networking"]
    assert len(found) <= 1
    return found[0] if found else None


def platform_values(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (platform,) = [o for o in objects if o["metadata"]["name"] == "cozystack.cozystack-platform"]
    return platform["spec"]["components"]["platform"]["values"]


def hubble_of(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["components"]["cilium"]["values"]["cilium"]["hubble"]


# --- the recommended values ----------------------------------------------------------------------


def test_recommended_values_are_the_documented_block_plus_service_monitor(rendered) -> None:
    hubble = hubble_of(networking(rendered(overlay())))
    assert hubble == recommended()
    # The L7 dashboard needs the whole labelsContext, byte for byte.
    assert hubble["metrics"]["enabled"][-1] == yaml(HUBBLE_EXAMPLE)["cilium"]["hubble"]["metrics"]["enabled"][-1]


def test_user_overrides_merge_onto_the_recommended_values(rendered) -> None:
    hubble = hubble_of(networking(rendered(overlay({"hubble": {
        "enabled": True,
        "relay": {"replicas": 2},
        "ui": {"enabled": False},
        "metrics": {"enabled": ["dns", "drop"]},
        "values": {"relay": {"replicas": 3}, "tls": {"auto": {"method": "cronJob"}}},
    }}))))
    assert hubble["relay"] == {"enabled": True, "replicas": 3}  # raw values win over hubble.relay
    assert hubble["ui"] == {"enabled": False}
    assert hubble["metrics"] == {"enabled": ["dns", "drop"], "serviceMonitor": {"enabled": True}}  # lists replace
    assert hubble["tls"] == {"auto": {"method": "cronJob"}}


def test_hubble_off_renders_nothing(rendered) -> None:
    objects = rendered(overlay({"hubble": {"enabled": False, "ownership": "own"}}))
    assert networking(objects) is None
    assert "bundles" not in platform_values(objects)


# --- patch mode ----------------------------------------------------------------------------------


def test_patch_carries_only_the_hubble_subtree_and_syncs_after_the_platform(rendered) -> None:
    objects = rendered(overlay())
    obj = networking(objects)
    assert obj["spec"] == {"components": {"cilium": {"values": {"cilium": {"hubble": recommended()}}}}}
    annotations = obj["metadata"]["annotations"]
    assert annotations[OWNERSHIP_ANNOTATION] == "patch"
    options = [o.strip() for o in annotations[ARGO_SYNC_OPTIONS].split(",")]
    assert "ServerSideApply=true" in options
    # Pruning or deleting the patch would delete the cluster's CNI Package.
    assert "Prune=false" in options and "Delete=false" in options
    assert annotations[FLUX_PRUNE] == "disabled"
    (platform,) = [o for o in objects if o["metadata"]["name"] == "cozystack.cozystack-platform"]
    platform_wave = int((platform["metadata"].get("annotations") or {}).get(ARGO_SYNC_WAVE, "0"))
    assert int(annotations[ARGO_SYNC_WAVE]) > platform_wave  # PLT-11: never the object that creates it
    assert "helm.sh/resource-policy" not in annotations  # metadata the platform owns stays the platform's
    assert "disabledPackages" not in platform_values(objects).get("bundles", {})


def test_patch_is_emitted_for_the_sample_gpu_apt_01() -> None:
    objects = render(OVERLAYS / "clusters" / "gpu-apt-01").manifests
    obj = networking(objects)
    assert obj["metadata"]["annotations"][OWNERSHIP_ANNOTATION] == "patch"
    assert "variant" not in obj["spec"]
    assert hubble_of(obj) == recommended()


# --- own mode ------------------------------------------------------------------------------------


def test_own_on_isp_full_is_the_platform_object_plus_hubble(rendered) -> None:
    objects = rendered(overlay(TALOS, {"hubble": {"enabled": True, "ownership": "own"}}))
    obj = networking(objects)
    assert obj["spec"] == yaml(ISP_FULL_NETWORKING_SPEC_V1_6_2)
    main = networking(rendered(overlay(TALOS, MAIN, {"hubble": {"enabled": True, "ownership": "own"}})))
    assert main["spec"] == yaml(ISP_FULL_NETWORKING_SPEC)  # that version's system.yaml, gatewayAPI included
    assert obj["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert obj["metadata"]["annotations"][OWNERSHIP_ANNOTATION] == "own"
    assert "cozystack.networking" in platform_values(objects)["bundles"]["disabledPackages"]


def test_own_sample_gpu_talos_01_renders_the_isp_full_object() -> None:
    objects = render(OVERLAYS / "clusters" / "gpu-talos-01").manifests
    assert networking(objects)["spec"] == yaml(ISP_FULL_NETWORKING_SPEC_V1_6_2)
    assert "cozystack.networking" in platform_values(objects)["bundles"]["disabledPackages"]


def test_own_sample_on_isp_full_generic() -> None:
    objects = render(OVERLAYS / "clusters" / "hubble-generic-01").manifests
    obj = networking(objects)
    assert obj["spec"]["variant"] == "kubeovn-cilium-generic"
    assert obj["spec"]["components"]["kubeovn"]["values"]["kube-ovn"] == {
        "ipv4": {"POD_CIDR": "10.244.0.0/16", "POD_GATEWAY": "10.244.0.1", "SVC_CIDR": "10.96.0.0/16",
                 "JOIN_CIDR": "100.64.0.0/16"},
        "MASTER_NODES_LABEL": "node-role.kubernetes.io/control-plane=true",
    }
    cilium = obj["spec"]["components"]["cilium"]["values"]["cilium"]
    # base: apiServerEndpoint https://api.{{ vars.domain }}:{{ vars.apiPort }}, apiPort "6443" here
    assert cilium["k8sServiceHost"] == "api.hubble-generic-01.example.org"
    assert cilium["k8sServicePort"] == "6443" and isinstance(cilium["k8sServicePort"], str)
    assert cilium["cgroup"] == {"autoMount": {"enabled": True}}
    assert "gatewayAPI" not in cilium  # v1.6.2 does not thread gateway.http2
    assert cilium["hubble"]["ui"] == {"enabled": False}
    assert platform_values(objects)["bundles"]["disabledPackages"] == ["cozystack.networking"]


def test_own_follows_every_platform_value_system_yaml_reads(rendered) -> None:
    obj = networking(rendered(overlay({"platform": {"variant": "isp-full-generic", "version": "main-3c780ac", "values": {
        "publishing": {"apiServerEndpoint": "https://api.example.org"},
        "networking": {"podCIDR": "10.10.0.0/16", "kubeovn": {"MASTER_NODES": "10.0.0.1,10.0.0.2"},
                       "encryption": {"enabled": True}},
        "gateway": {"http2": False},
    }}}, {"hubble": {"enabled": True, "ownership": "own"}})))
    kube_ovn = obj["spec"]["components"]["kubeovn"]["values"]["kube-ovn"]
    assert kube_ovn["ipv4"]["POD_CIDR"] == "10.10.0.0/16"
    assert kube_ovn["ipv4"]["POD_GATEWAY"] == "10.244.0.1"  # chart default where the overlay is silent
    assert kube_ovn["MASTER_NODES"] == "10.0.0.1,10.0.0.2"
    assert kube_ovn["func"] == {"ENABLE_OVN_IPSEC": True}
    cilium = obj["spec"]["components"]["cilium"]["values"]["cilium"]
    assert (cilium["k8sServiceHost"], cilium["k8sServicePort"]) == ("api.example.org", "6443")
    assert cilium["gatewayAPI"] == {"enableAlpn": False}


def test_own_at_v1_6_2_writes_no_key_that_version_never_renders(rendered) -> None:
    obj = networking(rendered(overlay({"platform": {"variant": "isp-full-generic", "version": "v1.6.2", "values": {
        "publishing": {"apiServerEndpoint": "https://api.example.org"},
        "networking": {"encryption": {"enabled": True}}, "gateway": {"http2": False},
    }}}, {"hubble": {"enabled": True, "ownership": "own"}})))
    assert "func" not in obj["spec"]["components"]["kubeovn"]["values"]["kube-ovn"]
    assert "gatewayAPI" not in obj["spec"]["components"]["cilium"]["values"]["cilium"]


def test_own_uses_the_cluster_configmap_first_on_generic(rendered) -> None:
    obj = networking(rendered(overlay({"hubble": {"enabled": True, "ownership": "own", "clusterConfigMap": {
        "api-server-endpoint": "https://10.0.0.10:6443", "ipv4-svc-cidr": "10.97.0.0/16", "ipv4-pod-cidr": ""}}})))
    cilium = obj["spec"]["components"]["cilium"]["values"]["cilium"]
    assert (cilium["k8sServiceHost"], cilium["k8sServicePort"]) == ("10.0.0.10", "6443")
    ipv4 = obj["spec"]["components"]["kubeovn"]["values"]["kube-ovn"]["ipv4"]
    assert ipv4["SVC_CIDR"] == "10.97.0.0/16"
    assert ipv4["POD_CIDR"] == "10.244.0.0/16"  # an empty ConfigMap value falls back (Sprig default)


def test_isp_full_ignores_the_configmap_and_the_endpoint(rendered) -> None:
    obj = networking(rendered(overlay(TALOS, {"hubble": {"enabled": True, "ownership": "own", "clusterConfigMap": {
        "api-server-endpoint": "https://10.0.0.10:6443", "ipv4-svc-cidr": "10.97.0.0/16"}}})))
    assert obj["spec"] == yaml(ISP_FULL_NETWORKING_SPEC_V1_6_2)


@pytest.mark.parametrize(("endpoint", "host"), [
    ("https://api.example.org:443", "api.example.org:443"),
    ("https://api.example.org", "api.example.org"),
    ("https://user@api.example.org:6443/path?q=1", "api.example.org:6443"),
    ("https://[2001:db8::1]:6443", "[2001:db8::1]:6443"),
    ("api.example.org:6443", ""),  # scheme "api.example.org", opaque "6443"
    ("api.example.org", ""),  # a path
])
def test_go_url_host(endpoint: str, host: str) -> None:
    assert go_url_host(endpoint) == host


@pytest.mark.parametrize("endpoint", ["10.0.0.1:6443", "https://api.example.org:64x3", ":6443",
                                      "https://[::1", "https://api example.org"])
def test_go_url_host_refuses_what_go_refuses(endpoint: str) -> None:
    with pytest.raises(ValueError):
        go_url_host(endpoint)


def test_own_refuses_an_endpoint_the_platform_cannot_parse(cluster) -> None:
    path = cluster(overlay({"platform": {"variant": "isp-full-generic",
                                         "values": {"publishing": {"apiServerEndpoint": "10.0.0.1:6443"}}}},
                           {"hubble": {"enabled": True, "ownership": "own"}}))
    with pytest.raises(RenderError) as info:
        render(path)
    (finding,) = [f for f in info.value.findings if f.code == "OVL-ENDPOINT"]
    assert finding.severity == ERROR and "first path segment" in finding.message
    assert finding.location.line > 0


@pytest.mark.parametrize("endpoint", ["", "api.example.org:6443"])
def test_own_warns_when_the_platform_renders_an_empty_host(rendered, cluster, endpoint: str) -> None:
    data = overlay({"platform": {"variant": "isp-full-generic",
                                 "values": {"publishing": {"apiServerEndpoint": endpoint}}}},
                   {"hubble": {"enabled": True, "ownership": "own"}})
    result = render(cluster(data))
    assert [f.code for f in result.findings if f.code == "OVL-ENDPOINT"] == ["OVL-ENDPOINT"]
    cilium = networking(result.manifests)["spec"]["components"]["cilium"]["values"]["cilium"]
    assert (cilium["k8sServiceHost"], cilium["k8sServicePort"]) == ("", "6443")


def test_patch_mode_never_parses_the_endpoint(rendered) -> None:
    objects = rendered(overlay({"platform": {"variant": "isp-full-generic",
                                             "values": {"publishing": {"apiServerEndpoint": "api.example.org:6443"}}}}))
    assert networking(objects)["metadata"]["annotations"][OWNERSHIP_ANNOTATION] == "patch"


def test_labels_leave_helm_its_managed_by_label(rendered) -> None:
    """cozystack.networking is created by the platform (Helm) release, which stamps
    app.kubernetes.io/managed-by: Helm and checks it before adopting. A patch co-manages it; "own"
    takes it over, and it must still pass Helm's check if the platform renders it again."""
    for ownership in ("patch", "own"):
        obj = networking(rendered(overlay({"hubble": {"enabled": True, "ownership": ownership}})))
        assert obj["metadata"]["labels"] == {CLUSTER_LABEL: "c1"}
        assert MANAGED_BY_LABEL not in obj["metadata"]["labels"]


# --- HUB-* rules ----------------------------------------------------------------------------------


def codes(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.code == rule]


def test_hub_01_platform_values_cilium_or_hubble(check) -> None:
    for key in ("cilium", "hubble"):
        for values in ({key: {"enabled": True}}, {"networking": {key: {"enabled": True}}}):
            data = overlay({"platform": {"variant": "isp-full-generic", "values": values}})
            (hit,) = codes(check(data, "HUB-01"), "HUB-01")
            assert hit.severity == ERROR and "cozystack.networking" in hit.message
            assert hit.location.line > 0
    assert not codes(check(overlay(), "HUB-01"), "HUB-01")


@pytest.mark.parametrize(("part", "reason"), [
    ({"platform": {"variant": "isp-hosted", "version": "main-3c780ac"}}, "variant noop"),
    # v1.6.2's system.yaml has no isp-hosted branch: no networking at all.
    ({"platform": {"variant": "isp-hosted"}}, "isp-hosted renders no system bundle"),
    ({"platform": {"variant": "default"}}, "no system bundle"),
    ({"platform": {"variant": "isp-full-generic",
                   "values": {"bundles": {"disabledPackages": ["cozystack.networking"]}}}}, "disabledPackages"),
    ({"platform": {"variant": "isp-hosted", "version": "main-3c780ac"}, "hubble": {"enabled": True, "ownership": "own"}},
     "variant noop"),
])
def test_hub_02_refuses_hubble_without_cozystack_cilium(check, part: dict[str, Any], reason: str) -> None:
    findings = check(overlay(part), "HUB-02")
    (hit,) = codes(findings, "HUB-02")
    assert hit.severity == ERROR and reason in hit.message


def test_hub_02_hand_written_networking_needs_a_cilium_variant(check) -> None:
    noop = {"packages": {"cozystack.networking": {"variant": "noop", "components": {"cilium": {"values": {
        "cilium": {"hubble": {"enabled": True}}}}}}}, "hubble": {"enabled": False}}
    (hit,) = codes(check(overlay({"platform": {"variant": "default"}}, noop), "HUB-02"), "HUB-02")
    assert "variant noop" in hit.message
    noop["packages"]["cozystack.networking"]["variant"] = "cilium"
    assert not codes(check(overlay({"platform": {"variant": "default"}}, noop), "HUB-02"), "HUB-02")


def test_hub_02_passes_where_the_platform_runs_cilium(check) -> None:
    for part in ({}, TALOS, {"hubble": {"enabled": True, "ownership": "own"}},
                 {"platform": {"variant": "isp-full-generic",
                               "values": {"bundles": {"disabledPackages": ["cozystack.networking"]}}},
                  "hubble": {"enabled": True, "ownership": "own"}}):
        assert not codes(check(overlay(part), "HUB-02"), "HUB-02")


def test_hub_02_render_is_refused_with_nothing_emitted(cluster) -> None:
    with pytest.raises(RenderError) as info:
        render(cluster(overlay({"platform": {"variant": "isp-hosted", "version": "main-3c780ac"}})))
    assert [f.code for f in info.value.findings if f.severity == ERROR] == ["HUB-02"]


@pytest.mark.parametrize("metrics", [
    {"enabled": []},
    {"enabled": ["dns", "httpV2:exemplars=true"]},
    {"enabled": ["httpV2:labelsContext=source_ip,source_namespace,destination_ip"]},
])
def test_hub_03_warns_on_a_metrics_list_the_dashboards_cannot_use(check, metrics: dict[str, Any]) -> None:
    (hit,) = codes(check(overlay({"hubble": {"enabled": True, "metrics": metrics}}), "HUB-03"), "HUB-03")
    assert hit.severity == WARNING


def test_hub_03_passes_the_recommended_list_and_a_labels_context_in_any_order(check) -> None:
    assert not codes(check(overlay(), "HUB-03"), "HUB-03")
    entry = "httpV2:labelsContext=destination_workload,source_workload;exemplars=true"
    assert not codes(check(overlay({"hubble": {"enabled": True, "metrics": {"enabled": [entry]}}}), "HUB-03"),
                     "HUB-03")


def test_hub_04_warns_without_a_service_monitor(check) -> None:
    data = overlay({"hubble": {"enabled": True, "metrics": {"serviceMonitor": {"enabled": False}}}})
    (hit,) = codes(check(data, "HUB-04"), "HUB-04")
    assert hit.severity == WARNING and "ServiceMonitor" in hit.message
    assert not codes(check(overlay(), "HUB-04"), "HUB-04")


def test_hub_05_warns_when_platform_monitoring_is_off(check) -> None:
    data = overlay({"platform": {"variant": "isp-full-generic", "values": {"monitoring": {"rootEnabled": False}}}})
    (hit,) = codes(check(data, "HUB-05"), "HUB-05")
    assert hit.severity == WARNING and hit.location.line > 0
    assert not codes(check(overlay(), "HUB-05"), "HUB-05")
    off = overlay({"hubble": {"enabled": False},
                   "platform": {"variant": "isp-full-generic", "values": {"monitoring": {"rootEnabled": False}}}})
    assert not codes(check(off, "HUB-05"), "HUB-05")


def test_rule_locations_point_at_the_overlay_line_that_set_the_value(cluster) -> None:
    text = "\n".join([
        "apiVersion: render.cozystack.io/v1alpha1",
        "kind: ClusterOverlay",
        "metadata: {name: c1}",
        "host: {os: apt}",
        "platform: {variant: isp-full-generic}",
        "hubble:",
        "  enabled: true",
        "  metrics:",
        "    serviceMonitor: {enabled: false}",
        "",
    ])
    path = cluster({})
    (path / "cluster.yaml").write_text(text)
    result = emit_overlay(load_overlay(path))
    (hit,) = run_rules(result, only=["HUB-04"])
    assert (hit.location.line, hit.location.col) == (9, 31)  # the `false`


@pytest.mark.parametrize(("endpoint", "why"), [("api.example.org:6443", "has no scheme"),
                                               ("https://:6443", "has an empty host"),
                                               ("https://user@:6443", "has an empty host")])
def test_own_says_why_the_host_is_empty(cluster, endpoint: str, why: str) -> None:
    # OVL-ENDPOINT names the cause: "https://:6443" has a scheme, its host is what is missing.
    data = overlay({"platform": {"variant": "isp-full-generic",
                                 "values": {"publishing": {"apiServerEndpoint": endpoint}}}},
                   {"hubble": {"enabled": True, "ownership": "own"}})
    (finding,) = [f for f in render(cluster(data)).findings if f.code == "OVL-ENDPOINT"]
    assert f"{endpoint!r} {why}," in finding.message
