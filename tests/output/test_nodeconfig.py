"""node-config (issue 4): netplan and Talos bridge config from vlans:, never in the manifest output."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from renderer.errors import RenderError
from renderer.output.nodeconfig import netplan, talos_documents, talos_form, talos_legacy
from tests.conftest import BASE_OVERLAY, OVERLAYS

# examples/vlan100-netplan-bridge.yaml: cozystack/website content/en/docs/next/networking/vm-external-vlan.md
# L41-55 @ aa0d9e1be37f3ab18e663c092f39c09e444c739f (Apache-2.0), verbatim.
NETPLAN_EXAMPLE = """\
network:
  version: 2
  vlans:
    # Tagged VLAN sub-interface, no address of its own — enslaved to the bridge.
    uplink.100:
      id: 100
      link: uplink
  bridges:
    br100:
      interfaces:
        - uplink.100
      # Optional host presence on the VLAN. Keep the node's default route on
      # its management interface — do not add a default route here.
      addresses:
        - 203.0.113.2/24
"""

# The Talos shapes of reference section (f) "Node-level bridge" (checked there against the Talos Go types
# and config.schema.json of v1.12.0/v1.13.6 for the multi-document form, v1.8.0/v1.11.0 for the legacy one).
TALOS_MULTIDOC = """\
apiVersion: v1alpha1
kind: LinkConfig
name: eno2
up: true
---
apiVersion: v1alpha1
kind: VLANConfig
name: eno2.100
vlanID: 100
parent: eno2
up: true
---
apiVersion: v1alpha1
kind: BridgeConfig
name: br100
links:
  - eno2.100
up: true
addresses:
  - address: 203.0.113.2/24
"""
TALOS_LEGACY = """\
machine:
  network:
    interfaces:
      - interface: eno2
        dhcp: false
        vlans:
          - vlanId: 100
      - interface: br100
        dhcp: false
        bridge:
          interfaces:
            - eno2.100
          stp:
            enabled: false
        addresses:
          - 203.0.113.2/24
"""

EXAMPLE_VLAN = {"name": "vlan100", "id": 100, "uplink": "uplink", "bridge": "br100",
                "namespaces": ["tenant-example"], "hostAddress": "203.0.113.2/24"}
ENO2_VLAN = {**EXAMPLE_VLAN, "uplink": "eno2"}


def load_all(text: str) -> list[Any]:
    return list(YAML(typ="safe").load_all(text))


def test_netplan_is_the_documented_example() -> None:
    assert netplan([EXAMPLE_VLAN]) == load_all(NETPLAN_EXAMPLE)[0]


def test_netplan_without_host_address_has_no_addresses() -> None:
    bridge = netplan([{**EXAMPLE_VLAN, "hostAddress": None}])["network"]["bridges"]["br100"]
    assert bridge == {"interfaces": ["uplink.100"]}


def test_netplan_mtu_and_routes() -> None:
    vlan = {**EXAMPLE_VLAN, "mtu": 9000, "routes": [{"to": "198.51.100.0/24", "via": "203.0.113.1"}]}
    network = netplan([vlan])["network"]
    assert network["vlans"]["uplink.100"]["mtu"] == 9000
    assert network["bridges"]["br100"]["mtu"] == 9000
    assert network["bridges"]["br100"]["routes"] == [{"to": "198.51.100.0/24", "via": "203.0.113.1"}]


def test_talos_multidoc_is_the_reference_shape() -> None:
    assert talos_documents([ENO2_VLAN]) == load_all(TALOS_MULTIDOC)


def test_talos_multidoc_brings_each_uplink_up_once() -> None:
    second = {**ENO2_VLAN, "name": "v2", "id": 200, "bridge": "br200", "hostAddress": None}
    docs = talos_documents([ENO2_VLAN, second, {**ENO2_VLAN, "name": "vlan100-b"}])
    assert [(d["kind"], d["name"]) for d in docs] == [
        ("LinkConfig", "eno2"), ("VLANConfig", "eno2.100"), ("BridgeConfig", "br100"),
        ("VLANConfig", "eno2.200"), ("BridgeConfig", "br200")]
    assert "addresses" not in docs[-1]


def test_talos_routes_use_each_forms_keys() -> None:
    vlan = {**ENO2_VLAN, "routes": [{"to": "198.51.100.0/24", "via": "203.0.113.1"}]}
    bridge = talos_documents([vlan])[-1]
    assert bridge["routes"] == [{"destination": "198.51.100.0/24", "gateway": "203.0.113.1"}]
    legacy = talos_legacy([vlan])["machine"]["network"]["interfaces"][-1]
    assert legacy["routes"] == [{"network": "198.51.100.0/24", "gateway": "203.0.113.1"}]


def test_talos_legacy_is_the_reference_shape() -> None:
    assert talos_legacy([ENO2_VLAN]) == load_all(TALOS_LEGACY)[0]


@pytest.mark.parametrize(("version", "form"), [
    (None, "multidoc"), ("v1.13.6", "multidoc"), ("v1.12.0", "multidoc"), ("v1.12.0-beta.0", "multidoc"),
    ("1.12.3", "multidoc"), ("v2.0", "multidoc"), ("v1.12.0-alpha.1", "legacy"), ("v1.11.5", "legacy"),
    ("v1.2.0", "legacy"),
])
def test_talos_form_by_version(version: str | None, form: str) -> None:
    assert talos_form(version) == form


@pytest.mark.parametrize(("version", "text"), [("v1.1.9", "needs v1.2.0"), ("latest", "not a Talos version")])
def test_talos_form_refuses(version: str, text: str) -> None:
    with pytest.raises(RenderError) as info:
        talos_form(version)
    assert text in info.value.findings[0].message


# --- the command ----------------------------------------------------------------------------------

BASE = {**BASE_OVERLAY, "vlans": [ENO2_VLAN]}


@pytest.fixture
def cluster(repo):
    def write(data: dict[str, Any], name: str = "c1") -> Path:
        data = copy.deepcopy(data)
        data["metadata"] = {"name": name}
        root = repo({f"clusters/{name}/cluster.yaml": json.dumps(data, indent=2)})
        return root / "clusters" / name

    return write


def test_command_writes_one_file_per_cluster(cli, cluster, tmp_path: Path) -> None:
    cluster(BASE)
    path = cluster({**BASE, "host": {"os": "talos", "talosVersion": "v1.11.0"}, "platform": {"variant": "isp-full"}},
                   "c2")
    out = tmp_path / "nodes"
    code, stdout, err = cli("node-config", str(path.parent.parent), "--all", "--out", str(out))
    assert (code, stdout) == (0, ""), err
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name[0] != ".")
    assert (out / ".cozy-render-node-config").is_file()
    assert files == ["c1/netplan/60-cozy-render-vlans.yaml", "c2/talos/vlans-patch.yaml"]
    assert load_all((out / files[0]).read_text()) == [netplan([ENO2_VLAN])]
    assert load_all((out / files[1]).read_text()) == [talos_legacy([ENO2_VLAN])]
    assert (out / files[0]).read_text().startswith("# Generated by cozy-render for cluster c1")

    code, _, err = cli("node-config", str(path.parent.parent), "--all", "--out", str(out), "--check")
    assert code == 0, err
    (out / files[0]).write_text("changed\n")
    code, _, err = cli("node-config", str(path.parent.parent), "--all", "--out", str(out), "--check")
    assert code == 1 and "out of date" in err


def test_command_prints_without_out(cli) -> None:
    code, out, err = cli("node-config", str(OVERLAYS / "clusters" / "vlan-talos-01"))
    assert code == 0, err
    head, _, body = out.partition("\n")
    assert head == "# ==> vlan-talos-01/talos/vlans-patch.yaml <=="
    assert [d["kind"] for d in load_all(body)] == ["LinkConfig", "VLANConfig", "BridgeConfig",
                                                  "VLANConfig", "BridgeConfig"]


def test_sample_vlan_apt_01_netplan() -> None:
    from renderer.output.nodeconfig import cluster_files
    from tests.helpers import render

    (text,) = cluster_files(render(OVERLAYS / "clusters" / "vlan-apt-01").overlay).values()
    assert load_all(text)[0] == {"network": {"version": 2, "vlans": {
        "eno2.100": {"id": 100, "link": "eno2"}, "eno2.200": {"id": 200, "link": "eno2"}}, "bridges": {
        "br100": {"interfaces": ["eno2.100"], "addresses": ["203.0.113.2/24"]},
        "br200": {"interfaces": ["eno2.200"]}}}}


def test_command_refuses_an_overlay_that_does_not_render(cli, cluster, tmp_path: Path) -> None:
    path = cluster({**BASE, "vlans": [{**ENO2_VLAN, "gateway": "203.0.113.1"}]})
    out = tmp_path / "nodes"
    code, stdout, err = cli("node-config", str(path), "--out", str(out))
    assert code == 3 and stdout == "" and "error[NET-10]" in err
    assert not out.exists()


def test_command_never_writes_into_a_rendered_manifest_directory(cli, cluster, tmp_path: Path) -> None:
    path = cluster(BASE)
    rendered = tmp_path / "rendered"
    assert cli("render", str(path), "--out", str(rendered))[0] == 0
    before = sorted(p.name for p in rendered.iterdir())
    code, _, err = cli("node-config", str(path), "--out", str(rendered))
    assert code == 3 and "error[OUT-NODECONFIG]" in err
    assert sorted(p.name for p in rendered.iterdir()) == before
    # and the manifests never contain node config
    assert not [n for n in before if "netplan" in n or "talos" in n]


def test_command_without_vlans_says_so(cli, cluster) -> None:
    code, out, err = cli("node-config", str(cluster({k: v for k, v in BASE.items() if k != "vlans"})))
    assert (code, out) == (0, "") and "nothing to write" in err


def test_command_check_needs_out(cli, cluster) -> None:
    code, _, err = cli("node-config", str(cluster(BASE)), "--check")
    assert code == 2 and "--check needs --out" in err


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("where", ["repository", "cluster folder", "clusters folder", "git folder",
                                   "user folder", "home-like folder holding the repository"])
def test_out_never_replaces_a_folder_it_did_not_write(cli, cluster, tmp_path: Path, where: str) -> None:
    """Issue 25 item 1: node-config --out has render --out's refusals; the target is left byte for byte."""
    path = cluster(BASE)
    repo = path.parent.parent
    user = tmp_path / "notes"
    user.mkdir()
    (user / "todo.txt").write_text("mine\n")
    target = {"repository": repo, "cluster folder": path, "clusters folder": path.parent,
              "git folder": repo / ".git", "user folder": user,
              "home-like folder holding the repository": tmp_path}[where]
    before = _tree(tmp_path)
    code, stdout, err = cli("node-config", str(path), "--out", str(target))
    assert code == 3 and stdout == "", err
    assert "error[OUT-UNSAFE]" in err or "error[OUT-OWNED]" in err
    # One refusal line (the render's own warnings, e.g. NET-07 on the default v1.6.2, may precede it).
    assert len([line for line in err.strip().splitlines() if "error[" in line]) == 1, err
    assert _tree(tmp_path) == before


def test_out_replaces_its_own_folder_and_keeps_render_folders_beside_it(cli, cluster, tmp_path: Path) -> None:
    path = cluster(BASE)
    out = tmp_path / "deploy"
    assert cli("render", str(path.parent), "--all", "--out", str(out))[0] == 0
    nodes = out / "nodes"
    assert cli("node-config", str(path), "--out", str(nodes))[0] == 0
    assert (nodes / ".cozy-render-node-config").is_file()
    code, _, err = cli("node-config", str(path), "--out", str(nodes))  # again: its own folder
    assert code == 0, err
    # render --all --out leaves node-config's folder alone (it is not a vanished cluster folder)
    assert cli("render", str(path.parent), "--all", "--out", str(out))[0] == 0
    assert (nodes / "c1" / "netplan" / "60-cozy-render-vlans.yaml").is_file()


def test_out_accepts_a_folder_written_before_the_mark(cli, cluster, tmp_path: Path) -> None:
    path = cluster(BASE)
    nodes = tmp_path / "nodes"
    (nodes / "c1" / "netplan").mkdir(parents=True)
    (nodes / "c1" / "netplan" / "60-cozy-render-vlans.yaml").write_text("# Generated by cozy-render for cluster c1\n")
    code, _, err = cli("node-config", str(path), "--out", str(nodes))
    assert code == 0, err
    (nodes / "c1" / "extra.txt").write_text("a user's file\n")
    (nodes / ".cozy-render-node-config").unlink()
    code, _, err = cli("node-config", str(path), "--out", str(nodes))
    assert code == 3 and "error[OUT-OWNED]" in err


def test_out_refuses_a_symlinked_target(cli, cluster, tmp_path: Path) -> None:
    path = cluster(BASE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    code, _, err = cli("node-config", str(path), "--out", str(tmp_path / "link"))
    assert code == 3 and "error[OUT-WRITE]" in err
    assert list(elsewhere.iterdir()) == []
