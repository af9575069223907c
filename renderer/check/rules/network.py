"""NET-*: VLAN / multus rules (reference section (g), "VLAN / multus").

Rules on NetworkAttachmentDefinitions read every rendered NAD: the ones the vlans feature writes
(role ``vlan``, one per entry and namespace) and any in ``manifests:``. Rules on the node bridge
read the ``vlans:`` entries, which are also what ``cozy-render node-config`` writes.

Not implemented here because overlay facts cannot decide them: NET-02 and NET-12 (need the
vm-instance values of each VM), NET-09 (a change against the live cluster; the diff's concern).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from renderer.check.rules import Hit, RuleContext, rule
from renderer.errors import ERROR, WARNING
from renderer.model import Emitted
from renderer.resolve.features.vlans import NAD_API, NAD_KIND

_C = "C:"  # cozystack/cozystack @ 3c780acd417f086f8f18d040d0d7020ff55d3ba3
_W = "W:"  # cozystack/website @ aa0d9e1be37f3ab18e663c092f39c09e444c739f, content/en/docs/next/
SRC_VLAN_DOC = f"{_W}networking/vm-external-vlan.md ({_C}docs/vm-external-vlan.md)"
SRC_BRIDGE_GO = "containernetworking/plugins plugins/main/bridge/bridge.go @ 00406f9d1ef5651977525ec13afb1552eb59f2e3"
SRC_SYSTEM = f"{_C}packages/core/platform/templates/bundles/system.yaml"
SRC_MULTUS_DOCKERFILE = f"{_C}packages/system/multus/images/multus-cni/Dockerfile"
SRC_PLATFORM_VALUES = f"{_C}packages/core/platform/values.yaml (networking.stageCniPlugins)"
NAD_CRD = "network-attachment-definitions.k8s.cni.cncf.io"
VLAN_IDS = range(1, 4095)
# The vm-instance application as a Cozystack API object (its spec holds the chart values).
VM_INSTANCE_API = "apps.cozystack.io/v1alpha1"
VM_INSTANCE_KIND = "VMInstance"
DEFAULT_DESTINATIONS = ("default", "0.0.0.0/0", "::/0")
_VPC_NAD_NAME = re.compile(r"^subnet-[0-9a-f]{8}$")


def _nads(ctx: RuleContext) -> list[Emitted]:
    return [e for e in ctx.objects if e.api_version == NAD_API and e.kind == NAD_KIND]


def _plugins(e: Emitted) -> list[dict[str, Any]] | None:
    """The CNI plugin configs of a NAD (a single config or a conflist), or None when unreadable."""
    config = (e.obj.get("spec") or {}).get("config")
    if not isinstance(config, str):
        return None
    try:
        parsed = json.loads(config)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    plugins = parsed.get("plugins")
    if plugins is None:
        return [parsed]
    if not isinstance(plugins, list) or not all(isinstance(p, dict) for p in plugins):
        return None
    return plugins


def _config_problem(e: Emitted) -> str | None:
    config = (e.obj.get("spec") or {}).get("config")
    if not isinstance(config, str):
        return "spec.config must be a JSON string"
    try:
        parsed = json.loads(config)
    except ValueError as exc:
        return f"spec.config is not valid JSON ({exc})"
    if not isinstance(parsed, dict):
        return "spec.config must be a JSON object"
    if not parsed.get("cniVersion"):
        return "spec.config has no cniVersion"
    plugins = _plugins(e)
    if not plugins:
        return "spec.config plugins must be a non-empty list of objects"
    for plugin in plugins:
        if not plugin.get("type"):
            return "a CNI config has no type"
        if plugin.get("type") == "bridge" and not plugin.get("bridge"):
            return "a bridge config without \"bridge\" attaches to cni0, not to the VLAN bridge"
    return None


@rule(
    "NET-01", ERROR,
    "macvlan/ipvlan NADs drop replies to a VM's MAC",
    """
    vm-instance attaches every network with KubeVirt bridge binding, which puts the guest's own MAC
    on the wire. macvlan demultiplexes inbound frames by the macvlan child's MAC (ipvlan by the
    parent's), so replies to the guest MAC are dropped: the guest transmits, its neighbour stays
    FAILED. The host cannot reach macvlan children through the parent either. A Linux bridge forwards
    by learned MAC and can carry a host address: VLAN entries must use type bridge. NADs given in
    manifests: are checked when a VMInstance in the render attaches them (pods on macvlan are fine).
    """,
    [SRC_VLAN_DOC + ' "Why bridge and not macvlan"'],
)
def net_01(ctx: RuleContext) -> Iterator[Hit]:
    for i, vlan in enumerate(ctx.overlay.get("vlans") or []):
        if vlan.get("type") in ("macvlan", "ipvlan"):
            yield Hit(f"{vlan['type']}: macvlan/ipvlan drop replies to the guest MAC under KubeVirt bridge binding; "
                      "use a bridge NAD (type: bridge, the default).", overlay_path=("vlans", i, "type"))
    # NADs from manifests: only a VM's attachment is broken (pods are fine on macvlan), so a NAD counts
    # when a rendered vm-instance names it; vm-instance resolves networks in its own namespace.
    nads = {(e.namespace, e.name): e for e in _nads(ctx)}
    for vm in ctx.objects:
        if vm.api_version != VM_INSTANCE_API or vm.kind != VM_INSTANCE_KIND:
            continue
        spec = vm.obj.get("spec")
        networks = spec.get("networks") if isinstance(spec, dict) else None
        for i, network in enumerate(networks if isinstance(networks, list) else []):
            name = network.get("name") if isinstance(network, dict) else None
            nad = nads.get((vm.namespace, name)) if isinstance(name, str) else None
            types = [p.get("type") for p in (_plugins(nad) or [])] if nad is not None else []
            bad = next((t for t in types if t in ("macvlan", "ipvlan")), None)
            if bad and nad is not None:
                yield Hit(f"VM {vm.namespace}/{vm.name} attaches NAD {nad.name} of type {bad}: macvlan/ipvlan drop "
                          "replies to the guest MAC under KubeVirt bridge binding; use a bridge NAD.",
                          vm, ("spec", "networks", i, "name"))


@rule(
    "NET-03", ERROR,
    "Invalid CNI config in a NetworkAttachmentDefinition",
    """
    The API server accepts any string in spec.config; Multus fails at pod start instead. A bridge
    config without "bridge" is worse: the plugin silently uses cni0, so the VM lands on a bridge
    with no uplink. cozy-render's vlans entries always write a complete config; this checks NADs
    given in manifests:.
    """,
    [SRC_VLAN_DOC, SRC_BRIDGE_GO + " (defaultBrName)"],
)
def net_03(ctx: RuleContext) -> Iterator[Hit]:
    for e in _nads(ctx):
        problem = _config_problem(e)
        if problem:
            yield Hit(f"Invalid CNI config in NAD {e.namespace}/{e.name}: {problem}.", e, ("spec", "config"))


@rule(
    "NET-04", ERROR,
    "A bridge NAD names a bridge the nodes do not have",
    """
    The bridge CNI plugin creates a bridge that does not exist on the node, empty and without an
    uplink, so a VM attached to a NAD whose bridge nobody configured starts on an isolated L2 segment
    and nothing reports an error. cozy-render configures node bridges only from vlans: entries
    (cozy-render node-config); a bridge NAD must name one of them.
    """,
    [SRC_VLAN_DOC, SRC_BRIDGE_GO + " (ensureBridge)"],
)
def net_04(ctx: RuleContext) -> Iterator[Hit]:
    bridges = {v.get("bridge") for v in ctx.overlay.get("vlans") or []}
    for e in _nads(ctx):
        for plugin in _plugins(e) or []:
            bridge = plugin.get("bridge")
            if plugin.get("type") == "bridge" and bridge and bridge not in bridges:
                known = ", ".join(sorted(str(b) for b in bridges)) or "none"
                yield Hit(f"Bridge {bridge} (NAD {e.namespace}/{e.name}) is not configured on the nodes: no vlans: "
                          f"entry declares it (declared: {known}); the bridge plugin would create it empty.",
                          e, ("spec", "config"))


@rule(
    "NET-05", WARNING,
    "A VLAN bridge NAD should have ipam: {}",
    """
    The Cozystack recipe attaches VMs at L2 and sets the address inside the guest (cloud-init); the
    NAD has ipam: {}. An IPAM plugin here assigns an address to the pod side that the guest never
    sees, and the dhcp plugin is not among the plugins multus stages.
    """,
    [SRC_VLAN_DOC, SRC_MULTUS_DOCKERFILE],
)
def net_05(ctx: RuleContext) -> Iterator[Hit]:
    for e in _nads(ctx):
        for plugin in _plugins(e) or []:
            if plugin.get("type") == "bridge" and plugin.get("ipam"):
                yield Hit(f"NAD {e.namespace}/{e.name}: this path expects ipam: {{}} and static addresses in the "
                          "guest; the dhcp plugin is not staged.", e, ("spec", "config", "ipam"))


@rule(
    "NET-06", ERROR,
    "NetworkAttachmentDefinitions need cozystack.multus",
    """
    The NetworkAttachmentDefinition CRD and the Multus daemon come from Package cozystack.multus,
    which the platform renders only on isp-full and isp-full-generic and not when it is in
    bundles.disabledPackages. Without it the NADs cannot be applied (no CRD) or are never used.
    A NAD CRD rendered by this overlay (manifests:) counts as provided.
    """,
    [SRC_SYSTEM, f"{_C}packages/core/platform/tests/vpc_multus_dependency_test.yaml", SRC_VLAN_DOC],
)
def net_06(ctx: RuleContext) -> Iterator[Hit]:
    nads = _nads(ctx)
    if not nads:
        return
    facts = ctx.facts
    if facts.multus_rendered or any(e.name == "cozystack.multus" for e in ctx.packages()):
        return
    if any(e.kind == "CustomResourceDefinition" and e.name == NAD_CRD for e in ctx.objects):
        return
    why = "it is in bundles.disabledPackages" if facts.system_enabled and facts.is_disabled("cozystack.multus") \
        else f"platform variant {facts.variant} does not render it"
    for e in nads:
        yield Hit(f"NetworkAttachmentDefinition CRD comes from cozystack.multus, which this cluster does not install "
                  f"({why}): NAD {e.namespace}/{e.name}.", e, ("metadata", "name"))


@rule(
    "NET-07", WARNING,
    "Bridge CNI plugin may be missing on the hosts",
    """
    With networking.stageCniPlugins false multus does not copy the reference CNI plugins into
    /opt/cni/bin (a chart version without that switch, v1.6.2, stages none at all), and generic
    Linux hosts do not necessarily have the bridge plugin (k3s keeps its own
    copies elsewhere; Cilium installs only cilium-cni and loopback). Pods with a bridge NAD then fail
    with: failed to find plugin "bridge" in path [/opt/cni/bin]. Set host.cniPluginsProvided: true
    when the hosts ship it.
    """,
    [SRC_PLATFORM_VALUES, SRC_SYSTEM],
)
def net_07(ctx: RuleContext) -> Iterator[Hit]:
    if ctx.overlay.get("host", "os") != "apt" or ctx.overlay.get("host", "cniPluginsProvided") is True:
        return
    bridge_nads = [e for e in _nads(ctx) if any(p.get("type") == "bridge" for p in _plugins(e) or [])]
    if not bridge_nads:
        return
    facts = ctx.facts
    if not facts.multus_rendered:
        return  # NET-06's case
    staged, readable = facts.stage_cni_plugins()
    if not readable or staged is not False:
        return
    if not facts.reads("networking.stageCniPlugins"):
        # The chart version has no staging at all (v1.6.2): point at the version, not at a key it ignores.
        yield Hit('Bridge CNI plugin may be missing: failed to find plugin "bridge" in path [/opt/cni/bin] '
                  f"(platform chart {facts.chart.version} does not stage CNI plugins into /opt/cni/bin; set "
                  "host.cniPluginsProvided: true if the hosts ship it).",
                  bridge_nads[0], ("spec", "config"))
        return
    yield Hit('Bridge CNI plugin may be missing: failed to find plugin "bridge" in path [/opt/cni/bin] '
              "(networking.stageCniPlugins is off; set host.cniPluginsProvided: true if the hosts ship it).",
              overlay_path=("platform", "values", "networking", "stageCniPlugins"))


@rule(
    "NET-08", WARNING,
    "A NAD uses a CNI plugin multus does not stage",
    """
    Multus stages bridge host-local static macvlan ipvlan vlan tuning portmap firewall bandwidth
    host-device ptp sbr vrf into /opt/cni/bin. Any other type must be installed on the hosts by other
    means (kube-ovn, used by the VPC app on the kubeovn-* networking variants, is).
    """,
    [SRC_MULTUS_DOCKERFILE],
)
def net_08(ctx: RuleContext) -> Iterator[Hit]:
    cni = ctx.data("vlan/cni.yaml")
    known = set(cni["stagedPlugins"]) | set(cni["hostProvided"])
    for e in _nads(ctx):
        for plugin in _plugins(e) or []:
            kind = plugin.get("type")
            if kind and kind not in known:
                yield Hit(f"CNI plugin {kind} is not staged by multus (NAD {e.namespace}/{e.name}).",
                          e, ("spec", "config"))


@rule(
    "NET-10", ERROR,
    "The VLAN bridge must not carry a default route",
    """
    The node keeps its default route on the management interface; a gateway or default route on the
    VLAN bridge moves the node's traffic (and the API server's) onto the VM VLAN. The Cozystack recipe
    gives the bridge at most a host address. The reference lists this as a warning; cozy-render refuses
    it because it writes the node config itself and a wrong default route cuts the node off.
    """,
    [SRC_VLAN_DOC + " step 1"],
)
def net_10(ctx: RuleContext) -> Iterator[Hit]:
    for i, vlan in enumerate(ctx.overlay.get("vlans") or []):
        if vlan.get("gateway") is not None:
            yield Hit(f"Keep the default route on the management interface: bridge {vlan.get('bridge')} would get "
                      f"gateway {vlan['gateway']}.", overlay_path=("vlans", i, "gateway"))
        for j, route in enumerate(vlan.get("routes") or []):
            if str(route.get("to", "")).lower() in DEFAULT_DESTINATIONS:
                yield Hit(f"Keep the default route on the management interface: bridge {vlan.get('bridge')} would get "
                          f"a default route via {route.get('via')}.", overlay_path=("vlans", i, "routes", j, "to"))


@rule(
    "NET-11", ERROR,
    "VLAN id must be 1-4094",
    """
    802.1Q ids 0 and 4095 are reserved. talm refuses other values at render time and Talos
    VLANConfig validation fails with "vlanID must be specified and between 1 and 4094"; netplan and
    the kernel refuse them too.
    """,
    [f"{_W}install/kubernetes/talm.md", "siderolabs/talos pkg/machinery/config/types/network/vlan.go (Validate)"],
)
def net_11(ctx: RuleContext) -> Iterator[Hit]:
    for i, vlan in enumerate(ctx.overlay.get("vlans") or []):
        if vlan.get("id") not in VLAN_IDS:
            yield Hit(f"VLAN id must be 1-4094, got {vlan.get('id')}.", overlay_path=("vlans", i, "id"))


@rule(
    "NET-13", WARNING,
    "NAD name collides with the VPC app's naming",
    """
    The vpc app creates kube-ovn NADs named subnet-<8 hex> in tenant namespaces; a VLAN NAD with
    such a name would be overwritten by, or overwrite, a VPC subnet's attachment.
    """,
    [f"{_C}packages/apps/vpc/templates/vpc.yaml"],
)
def net_13(ctx: RuleContext) -> Iterator[Hit]:
    for e in _nads(ctx):
        if _VPC_NAD_NAME.match(e.name) and not any(p.get("type") == "kube-ovn" for p in _plugins(e) or []):
            yield Hit(f"Name {e.name} collides with the VPC app's NAD naming (subnet-<8 hex>).",
                      e, ("metadata", "name"))
