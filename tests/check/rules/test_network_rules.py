"""NET-* rules: for each, at least one overlay that fires it and one that does not.

Overlays are JSON (valid YAML) in a throw-away repo; each test runs only the rule it is about (plus
the feature's own findings, which must stay empty where the overlay is otherwise valid).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from renderer.check.rules import run_rules
from renderer.errors import ERROR, WARNING, Finding
from renderer.load.overlay import load_overlay
from tests.conftest import BASE_OVERLAY
from tests.helpers import emit_overlay

VLAN = {"name": "vlan100", "id": 100, "uplink": "eno2", "bridge": "br100", "namespaces": ["tenant-a"]}
BASE = {**BASE_OVERLAY, "vlans": [VLAN]}


def nad(name: str, config: Any, namespace: str = "tenant-a") -> dict[str, Any]:
    return {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"config": config if isinstance(config, str) else json.dumps(config)}}


def overlay(**sections: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(copy.deepcopy(sections))
    return data


def with_vlan(**change: Any) -> dict[str, Any]:
    return overlay(vlans=[{**VLAN, **change}])


@pytest.fixture
def check(repo):
    """Hits of one rule (and the feature's own findings) for an overlay."""

    def run(data: dict[str, Any], rule: str) -> list[Finding]:
        root = repo({"clusters/c1/cluster.yaml": json.dumps(data, indent=2)})
        result = emit_overlay(load_overlay(root / "clusters" / "c1"))
        assert result.findings == [], result.findings
        return run_rules(result, only=[rule])

    return run


def one(findings: list[Finding], severity: str) -> Finding:
    assert len(findings) == 1, findings
    assert findings[0].severity == severity
    assert findings[0].location is not None and findings[0].location.line > 0
    return findings[0]


@pytest.mark.parametrize("kind", ["macvlan", "ipvlan"])
def test_net_01_refuses_macvlan_and_ipvlan(check, kind: str) -> None:
    hit = one(check(with_vlan(type=kind), "NET-01"), ERROR)
    assert "guest MAC" in hit.message and "bridge" in hit.message


def test_net_01_passes_bridge(check) -> None:
    assert check(overlay(), "NET-01") == []
    assert check(with_vlan(type="bridge"), "NET-01") == []


@pytest.mark.parametrize(("config", "text"), [
    ("{not json", "not valid JSON"),
    ({"type": "bridge", "bridge": "br100"}, "no cniVersion"),
    ({"cniVersion": "0.3.1", "bridge": "br100"}, "no type"),
    ({"cniVersion": "0.3.1", "type": "bridge", "ipam": {}}, "cni0"),
    ({"cniVersion": "1.0.0", "plugins": []}, "non-empty list"),
    ([1, 2], "JSON object"),
])
def test_net_03_refuses_invalid_cni_config(check, config: Any, text: str) -> None:
    hit = one(check(overlay(manifests=[nad("hand", config)]), "NET-03"), ERROR)
    assert text in hit.message


def test_net_03_passes_rendered_and_complete_configs(check) -> None:
    conflist = {"cniVersion": "1.0.0", "plugins": [{"type": "bridge", "bridge": "br100", "ipam": {}},
                                                    {"type": "tuning"}]}
    assert check(overlay(manifests=[nad("hand", conflist)]), "NET-03") == []


def test_net_04_refuses_a_bridge_no_vlan_configures(check) -> None:
    config = {"cniVersion": "0.3.1", "type": "bridge", "bridge": "br999", "ipam": {}}
    hit = one(check(overlay(manifests=[nad("hand", config)]), "NET-04"), ERROR)
    assert "br999" in hit.message and "br100" in hit.message


def test_net_04_passes_a_hand_written_nad_on_a_configured_bridge(check) -> None:
    config = {"cniVersion": "0.3.1", "type": "bridge", "bridge": "br100", "ipam": {}}
    assert check(overlay(manifests=[nad("hand", config, "tenant-b")]), "NET-04") == []


def test_net_05_warns_on_ipam(check) -> None:
    hit = one(check(with_vlan(ipam={"type": "dhcp"}), "NET-05"), WARNING)
    assert "ipam: {}" in hit.message
    assert check(overlay(), "NET-05") == []
    assert check(with_vlan(ipam={}), "NET-05") == []


@pytest.mark.parametrize(("platform", "why"), [
    ({"variant": "isp-hosted"}, "does not render it"),
    ({"variant": "default"}, "does not render it"),
    ({"variant": "isp-full", "values": {"bundles": {"disabledPackages": ["cozystack.multus"]}}}, "disabledPackages"),
])
def test_net_06_refuses_nads_without_multus(check, platform: dict[str, Any], why: str) -> None:
    hit = one(check(overlay(platform=platform), "NET-06"), ERROR)
    assert "cozystack.multus" in hit.message and why in hit.message


def test_net_06_passes_with_multus_or_a_crd_from_elsewhere(check) -> None:
    assert check(overlay(), "NET-06") == []
    assert check(overlay(platform={"variant": "isp-full"}), "NET-06") == []
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "network-attachment-definitions.k8s.cni.cncf.io"}, "spec": {}}
    assert check(overlay(platform={"variant": "isp-hosted"}, manifests=[crd]), "NET-06") == []
    assert check(overlay(platform={"variant": "isp-hosted"}, vlans=[]), "NET-06") == []


@pytest.mark.parametrize("value", [False, "off", "No", 0])
def test_net_07_warns_when_plugins_are_not_staged_on_apt(check, value: Any) -> None:
    data = overlay(platform={"variant": "isp-full-generic", "values": {"networking": {"stageCniPlugins": value}}})
    hit = one(check(data, "NET-07"), WARNING)
    assert 'failed to find plugin "bridge"' in hit.message


def test_net_07_warns_on_a_version_that_stages_nothing(check) -> None:
    """v1.6.2 (the default) has no staging: a bridge NAD on apt hosts may find no bridge plugin."""
    hit = one(check(overlay(), "NET-07"), WARNING)
    assert "platform chart v1.6.2 does not stage CNI plugins" in hit.message
    assert check(overlay(host={"os": "apt", "cniPluginsProvided": True}), "NET-07") == []


def test_net_07_passes(check) -> None:
    off = {"variant": "isp-full-generic", "values": {"networking": {"stageCniPlugins": False}}}
    staged = overlay(platform={"variant": "isp-full-generic", "version": "main-3c780ac"})
    assert check(staged, "NET-07") == []  # main stages the plugins by default
    assert check(overlay(platform=off, host={"os": "apt", "cniPluginsProvided": True}), "NET-07") == []
    assert check(overlay(platform={**off, "variant": "isp-full"}, host={"os": "talos"}), "NET-07") == []
    assert check(overlay(platform=off, vlans=[]), "NET-07") == []


def test_net_08_warns_on_an_unstaged_plugin(check) -> None:
    hit = one(check(overlay(manifests=[nad("sriov", {"cniVersion": "0.3.1", "type": "sriov"})]), "NET-08"), WARNING)
    assert "sriov" in hit.message


def test_net_08_passes_staged_and_host_provided_types(check) -> None:
    manifests = [nad("t", {"cniVersion": "0.3.1", "type": "tuning"}),
                 nad("ovn", {"cniVersion": "0.3.1", "type": "kube-ovn",
                             "server_socket": "/run/openvswitch/kube-ovn-daemon.sock"})]
    assert check(overlay(manifests=manifests), "NET-08") == []


@pytest.mark.parametrize("change", [
    {"gateway": "203.0.113.1"},
    {"routes": [{"to": "default", "via": "203.0.113.1"}]},
    {"routes": [{"to": "10.0.0.0/8", "via": "203.0.113.1"}, {"to": "0.0.0.0/0", "via": "203.0.113.1"}]},
    {"routes": [{"to": "::/0", "via": "2001:db8::1"}]},
])
def test_net_10_refuses_a_default_route_on_the_bridge(check, change: dict[str, Any]) -> None:
    hit = one(check(with_vlan(**change), "NET-10"), ERROR)
    assert "management interface" in hit.message


def test_net_10_passes_addresses_and_specific_routes(check) -> None:
    assert check(with_vlan(hostAddress="203.0.113.2/24",
                           routes=[{"to": "198.51.100.0/24", "via": "203.0.113.1"}]), "NET-10") == []


@pytest.mark.parametrize("vlan_id", [0, 4095, -1, 100000])
def test_net_11_refuses_ids_outside_the_802_1q_range(check, vlan_id: int) -> None:
    hit = one(check(with_vlan(id=vlan_id), "NET-11"), ERROR)
    assert "1-4094" in hit.message


@pytest.mark.parametrize("vlan_id", [1, 100, 4094])
def test_net_11_passes_valid_ids(check, vlan_id: int) -> None:
    assert check(with_vlan(id=vlan_id), "NET-11") == []


def test_net_13_warns_on_vpc_style_names(check) -> None:
    hit = one(check(with_vlan(name="subnet-0a1b2c3d"), "NET-13"), WARNING)
    assert "VPC" in hit.message


def test_net_13_passes_other_names_and_the_vpc_apps_own_nads(check) -> None:
    assert check(with_vlan(name="subnet-vlan100"), "NET-13") == []
    vpc = nad("subnet-0a1b2c3d", {"cniVersion": "0.3.1", "type": "kube-ovn"})
    assert check(overlay(manifests=[vpc]), "NET-13") == []
