"""VLANs for VMs: one bridge NetworkAttachmentDefinition per ``vlans[]`` entry and namespace.

Reference section (f). ``vm-instance`` attaches every entry of its ``networks`` as
``<Release.Namespace>/<name>`` with KubeVirt bridge binding, so each tenant namespace that runs VMs on
a VLAN needs its own copy of the NAD, and the NAD must be a ``bridge`` one (NET-01) naming the node
bridge that ``cozy-render node-config`` writes (netplan / Talos), with ``ipam: {}`` because the guest
sets its own address.

The node-level consistency checks live here (``vlan_findings``) because both the NADs and the node
bridge config are derived from the same entries: one bridge must carry exactly one VLAN of one uplink.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from renderer.errors import ERROR, Finding
from renderer.model import NAD_API, Derived
from renderer.resolve.features.context import FeatureContext

NAD_KIND = "NetworkAttachmentDefinition"
DEFAULT_TYPE = "bridge"
# Linux IFNAMSIZ is 16 including the terminating NUL; netplan, networkd and Talos refuse longer names.
MAX_LINK_NAME = 15
_LINK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def contribute(ctx: FeatureContext) -> None:
    vlans = ctx.overlay.get("vlans") or []
    if not vlans:
        return
    (cni,) = ctx.variants.load("vlan/cni.yaml")
    ctx.findings.extend(vlan_findings(ctx.overlay))
    seen: set[tuple[str, str]] = set()
    for i, vlan in enumerate(vlans):
        for j, namespace in enumerate(vlan.get("namespaces") or []):
            if (namespace, vlan["name"]) in seen:
                continue  # reported by vlan_findings (VLAN-DUPLICATE)
            seen.add((namespace, vlan["name"]))
            ctx.add(nad(vlan, namespace, cni["cniVersion"]), ctx.overlay.locate(("vlans", i)), [
                (("metadata", "namespace"), ("vlans", i, "namespaces", j)),
                (("metadata", "name"), ("vlans", i, "name")),
                (("spec", "config", "ipam"), ("vlans", i, "ipam")),
                (("spec",), ("vlans", i)),
                ((), ("vlans", i)),
            ], role="vlan", derived=[Derived(("spec", "config"), "vlans", ("vlans", i), "vlan/cni.yaml", (0,),
                                             "bridge CNI config from this vlans entry and cniVersion")])


def nad(vlan: dict[str, Any], namespace: str, cni_version: str) -> dict[str, Any]:
    return {
        "apiVersion": NAD_API,
        "kind": NAD_KIND,
        "metadata": {"name": vlan["name"], "namespace": namespace},
        "spec": {"config": nad_config(vlan, cni_version)},
    }


def nad_config(vlan: dict[str, Any], cni_version: str) -> str:
    """The CNI JSON, keys in a fixed order and laid out like the Cozystack example (a diff stays readable)."""
    config: dict[str, Any] = {
        "cniVersion": cni_version,
        "type": vlan.get("type") or DEFAULT_TYPE,
        # An absent "bridge" silently means cni0, and a name the node lacks is created empty: always explicit.
        "bridge": vlan["bridge"],
    }
    if vlan.get("mtu") is not None:
        config["mtu"] = vlan["mtu"]  # containernetworking/plugins bridge NetConf "mtu"
    config["ipam"] = vlan.get("ipam") or {}
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"


def link_name(vlan: dict[str, Any]) -> str:
    """The VLAN sub-interface: ``<uplink>.<id>``, the netplan / Talos convention in the reference."""
    return f"{vlan['uplink']}.{vlan['id']}"


def vlan_findings(overlay: Any) -> list[Finding]:
    """Entries that cannot become one consistent node config, or that name the same NAD twice."""
    vlans = overlay.get("vlans") or []
    findings: list[Finding] = []

    def error(code: str, message: str, *path: Any) -> None:
        findings.append(Finding(code, message, overlay.locate(("vlans",) + path), ERROR))

    seen_nad: dict[tuple[str, str], int] = {}
    by_bridge: dict[str, int] = {}
    by_link: dict[tuple[str, Any], int] = {}
    for i, vlan in enumerate(vlans):
        for j, namespace in enumerate(vlan.get("namespaces") or []):
            first = seen_nad.setdefault((namespace, vlan["name"]), i)
            if first != i:  # within one entry the schema's uniqueItems already refuses a repeat
                error("VLAN-DUPLICATE", f"NetworkAttachmentDefinition {namespace}/{vlan['name']} is rendered twice "
                                        f"(also by vlans[{first}]); NAD names must be unique per namespace",
                      i, "namespaces", j)
        for key in ("uplink", "bridge"):
            name = str(vlan.get(key, ""))
            if not _LINK_NAME.match(name) or len(name) > MAX_LINK_NAME:
                error("VLAN-CONFIG", f"{key} {name!r} is not a usable link name (letters, digits, '_', '-', '.'; "
                                     f"at most {MAX_LINK_NAME} characters)", i, key)
        if isinstance(vlan.get("id"), int) and len(link_name(vlan)) > MAX_LINK_NAME \
                and len(str(vlan.get("uplink", ""))) <= MAX_LINK_NAME:
            error("VLAN-CONFIG", f"VLAN link {link_name(vlan)!r} would exceed {MAX_LINK_NAME} characters "
                                 "(Linux interface name limit); use a shorter uplink name (an altname or alias)",
                  i, "uplink")
        if vlan.get("hostAddress") is not None:
            address = str(vlan["hostAddress"])
            try:
                ipaddress.ip_interface(address)
                if "/" not in address:
                    raise ValueError
            except ValueError:
                error("VLAN-CONFIG", f"hostAddress {address!r} must be an address with a prefix length, "
                                     "e.g. 203.0.113.2/24", i, "hostAddress")
        if vlan.get("bridge") == vlan.get("uplink"):
            error("VLAN-CONFIG", "bridge and uplink must be different links", i, "bridge")

        first_bridge = by_bridge.setdefault(vlan.get("bridge"), i)
        if first_bridge != i and _node_side(vlans[first_bridge]) != _node_side(vlan):
            other = vlans[first_bridge]
            if (other.get("uplink"), other.get("id")) != (vlan.get("uplink"), vlan.get("id")):
                why = (f"it already carries VLAN {other.get('id')} on {other.get('uplink')} (vlans[{first_bridge}]); "
                       "one bridge per VLAN, or the two VLANs become one L2 segment")
            else:
                why = f"vlans[{first_bridge}] configures the same bridge with a different hostAddress/mtu/routes"
            error("VLAN-CONFLICT", f"bridge {vlan.get('bridge')}: {why}", i, "bridge")
        link = (vlan.get("uplink"), vlan.get("id"))
        first_link = by_link.setdefault(link, i)
        if first_link != i and vlans[first_link].get("bridge") != vlan.get("bridge"):
            error("VLAN-CONFLICT", f"VLAN {vlan.get('id')} on {vlan.get('uplink')} is already enslaved to bridge "
                                   f"{vlans[first_link].get('bridge')} (vlans[{first_link}]); a link joins one bridge",
                  i, "bridge")
    return findings


def _node_side(vlan: dict[str, Any]) -> tuple[Any, ...]:
    """What an entry contributes to the node config; entries sharing a bridge must agree on all of it."""
    return (vlan.get("uplink"), vlan.get("id"), vlan.get("hostAddress"), vlan.get("mtu"),
            json.dumps(vlan.get("routes"), sort_keys=True), vlan.get("gateway"))
