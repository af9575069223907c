"""VLAN feature (issue 4): bridge NADs per entry and namespace, node-side consistency, vm-instance snippets."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from ruamel.yaml import YAML

from renderer.errors import ERROR, RenderError
from renderer.load.overlay import load_overlay
from renderer.output.nodeconfig import vm_snippets
from tests.conftest import BASE_OVERLAY, OVERLAYS
from tests.helpers import render

# examples/vlan100-network-attachment-definition.yaml: cozystack/website
# content/en/docs/next/networking/vm-external-vlan.md L69-81 @ aa0d9e1be37f3ab18e663c092f39c09e444c739f
# (Apache-2.0), verbatim.
NAD_EXAMPLE = """\
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: vlan100
  namespace: tenant-example
spec:
  config: |
    {
      "cniVersion": "0.3.1",
      "type": "bridge",
      "bridge": "br100",
      "ipam": {}
    }
"""

# examples/vlan100-vm-instance-values.yaml, same page L92-114, verbatim.
VM_INSTANCE_EXAMPLE = """\
# vm-instance values
instanceType: u1.medium
instanceProfile: ubuntu
disks:
  - name: example-system
networks:
  - name: vlan100
cloudInit: |
  #cloud-config
  write_files:
    - path: /etc/netplan/60-vlan100.yaml
      permissions: "0600"
      content: |
        network:
          version: 2
          ethernets:
            # Match the second NIC (the pod-network NIC is the first). Use the
            # interface that comes up without a DHCP lease.
            enp2s0:
              addresses:
                - 203.0.113.10/24
  runcmd:
    - netplan apply
"""

VLAN100 = {"name": "vlan100", "id": 100, "uplink": "eno2", "bridge": "br100", "namespaces": ["tenant-example"]}
BASE = BASE_OVERLAY


def yaml(text: str) -> Any:
    return YAML(typ="safe").load(text)


def overlay(*vlans: dict[str, Any], **sections: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(copy.deepcopy(sections))
    data["vlans"] = [copy.deepcopy(v) for v in vlans]
    return data


def nads(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == "NetworkAttachmentDefinition"]


def without_our_labels(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"].pop("labels")
    return obj


def refused(cluster, data: dict[str, Any]) -> list[Any]:
    with pytest.raises(RenderError) as info:
        render(cluster(data))
    return [f for f in info.value.findings if f.severity == ERROR]


def test_nad_is_the_documented_example(cluster) -> None:
    (nad,) = nads(render(cluster(overlay(VLAN100))).manifests)
    expected = yaml(NAD_EXAMPLE)
    assert json.loads(nad["spec"]["config"]) == json.loads(expected["spec"]["config"])
    assert without_our_labels(nad) == expected  # same text too: keys in the example's order


def test_one_nad_per_namespace_and_entry(cluster) -> None:
    objects = render(cluster(overlay(
        {**VLAN100, "namespaces": ["tenant-a", "tenant-b"]},
        {"name": "vlan200", "id": 200, "uplink": "eno2", "bridge": "br200", "namespaces": ["tenant-b"]},
    ))).manifests
    got = {(n["metadata"]["namespace"], n["metadata"]["name"]): json.loads(n["spec"]["config"])["bridge"]
           for n in nads(objects)}
    assert got == {("tenant-a", "vlan100"): "br100", ("tenant-b", "vlan100"): "br100",
                   ("tenant-b", "vlan200"): "br200"}


def test_config_key_order_is_stable_and_carries_mtu_and_ipam(cluster) -> None:
    (nad,) = nads(render(cluster(overlay({**VLAN100, "mtu": 9000, "ipam": {"type": "static"}}))).manifests)
    config = nad["spec"]["config"]
    assert list(json.loads(config)) == ["cniVersion", "type", "bridge", "mtu", "ipam"]
    assert json.loads(config)["mtu"] == 9000 and json.loads(config)["ipam"] == {"type": "static"}
    again = nads(render(cluster(overlay({**VLAN100, "mtu": 9000, "ipam": {"type": "static"}}))).manifests)[0]
    assert again["spec"]["config"] == config


def test_sample_vlan_apt_01_two_vlans_two_namespaces() -> None:
    objects = render(OVERLAYS / "clusters" / "vlan-apt-01").manifests
    got = sorted((n["metadata"]["namespace"], n["metadata"]["name"]) for n in nads(objects))
    assert got == [("tenant-example", "vlan100"), ("tenant-prod", "vlan100"), ("tenant-prod", "vlan200")]
    example = yaml(NAD_EXAMPLE)
    first = next(n for n in nads(objects) if n["metadata"]["namespace"] == "tenant-example")
    assert without_our_labels(first) == example


def test_sample_vlan_talos_01_two_vlans_two_namespaces() -> None:
    objects = render(OVERLAYS / "clusters" / "vlan-talos-01").manifests
    got = sorted((n["metadata"]["namespace"], n["metadata"]["name"]) for n in nads(objects))
    assert got == [("tenant-dev", "vlan300"), ("tenant-prod", "vlan300"), ("tenant-prod", "vlan301")]


# --- entries that cannot become one node config -----------------------------------------------------


def test_duplicate_nad_name_in_a_namespace_is_refused(cluster) -> None:
    twin = {**VLAN100, "id": 101, "bridge": "br101", "namespaces": ["tenant-b", "tenant-example"]}
    (finding,) = refused(cluster, overlay(VLAN100, twin))
    assert finding.code == "VLAN-DUPLICATE" and "tenant-example/vlan100" in finding.message
    assert finding.location.line > 0


def test_same_name_in_other_namespaces_is_fine(cluster) -> None:
    other = {**VLAN100, "namespaces": ["tenant-b"]}
    assert len(nads(render(cluster(overlay(VLAN100, other))).manifests)) == 2


@pytest.mark.parametrize(("second", "text"), [
    ({"name": "v2", "id": 200, "uplink": "eno2", "bridge": "br100", "namespaces": ["tenant-b"]}, "one bridge per VLAN"),
    ({"name": "v2", "id": 100, "uplink": "eno2", "bridge": "br200", "namespaces": ["tenant-b"]},
     "a link joins one bridge"),
    ({**VLAN100, "name": "v2", "hostAddress": "203.0.113.2/24"}, "different hostAddress"),
])
def test_conflicting_node_side_is_refused(cluster, second: dict[str, Any], text: str) -> None:
    (finding,) = refused(cluster, overlay(VLAN100, second))
    assert finding.code == "VLAN-CONFLICT" and text in finding.message


def test_two_names_on_one_bridge_agreeing_on_the_node_side_is_fine(cluster) -> None:
    assert len(nads(render(cluster(overlay(VLAN100, {**VLAN100, "name": "vlan100-b"}))).manifests)) == 2


@pytest.mark.parametrize(("change", "key"), [
    ({"uplink": "enp129s0f1np1"}, "uplink"),  # enp129s0f1np1.100: 17 characters
    ({"bridge": "br-with-a-long-name"}, "bridge"),
    ({"bridge": "br 100"}, "bridge"),
    ({"hostAddress": "203.0.113.2"}, "hostAddress"),
    ({"hostAddress": "not-an-address/24"}, "hostAddress"),
    ({"bridge": "eno2"}, "bridge"),
])
def test_unusable_link_names_and_addresses_are_refused(cluster, change: dict[str, Any], key: str) -> None:
    findings = refused(cluster, overlay({**VLAN100, **change}))
    assert [f.code for f in findings] == ["VLAN-CONFIG"]
    assert key in findings[0].message or key == "uplink"


def test_schema_refuses_unknown_type_and_empty_namespaces(cluster) -> None:
    for change in ({"type": "sriov"}, {"namespaces": []}, {"namespaces": ["a", "a"]}):
        findings = refused(cluster, overlay({**VLAN100, **change}))
        assert [f.code for f in findings] == ["OVL-SCHEMA"]


# --- vm-instance snippets ---------------------------------------------------------------------------


def test_vm_snippet_is_the_documented_networks_value(cluster) -> None:
    two = overlay(VLAN100, {"name": "vlan200", "id": 200, "uplink": "eno2", "bridge": "br200",
                            "namespaces": ["tenant-b"]})
    text = vm_snippets(load_overlay(cluster(two)))
    docs = list(YAML(typ="safe").load_all(text))
    assert docs[0] == {"networks": yaml(VM_INSTANCE_EXAMPLE)["networks"]}
    assert docs[1] == {"networks": [{"name": "vlan200"}]}
    assert "tenant-example" in text.split("---")[0] and "tenant-b" in text.split("---")[1]


def test_vm_snippet_command(cli) -> None:
    code, out, err = cli("vm-snippet", str(OVERLAYS / "clusters" / "vlan-apt-01"))
    assert code == 0, err
    assert [d["networks"][0]["name"] for d in YAML(typ="safe").load_all(out)] == ["vlan100", "vlan200"]


def test_vm_snippet_command_without_vlans(cli) -> None:
    code, out, err = cli("vm-snippet", str(OVERLAYS / "clusters" / "hubble-generic-01"))
    assert (code, out) == (0, "") and "no vlans" in err


def test_vm_snippet_refuses_a_cluster_that_does_not_render(cli, cluster) -> None:
    code, out, err = cli("vm-snippet", str(cluster(overlay({**VLAN100, "id": 5000}))))
    assert code == 3 and out == "" and "error[NET-11]" in err
