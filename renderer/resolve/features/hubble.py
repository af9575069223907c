"""Hubble: ``cilium.hubble`` values on Package ``cozystack.networking`` (reference sections (b), (e)).

There is no platform-values route to Cilium (HUB-01): the values must land on the child Package
``cozystack.networking`` at ``spec.components.cilium.values.cilium.hubble``, an object the platform
Helm release already writes. Two ways to get them there (design: "Ownership of platform-emitted
Packages"):

``patch`` (default)
    A partial Package carrying only the fields we own, applied server-side so the platform keeps its
    own fields. It deliberately has no ``spec.variant``: the CRD does not require it, and under
    server-side apply every field we send becomes co-owned by our field manager; owning the variant
    would make us fight the platform release whenever the platform variant changes. A patch must never
    be the object that *creates* ``cozystack.networking``: with no ``spec.variant`` the operator
    resolves it to variant ``default``, which the networking PackageSource does not have, so it sits
    Ready=False VariantNotFound until the platform release adopts it (helm-controller v1.5.0 takes
    ownership of existing objects; PLT-11). So it syncs in a later Argo CD wave than the
    platform Package, and Flux users apply it from a second Kustomization that ``dependsOn`` the first.
    It is never pruned or deleted by the GitOps tool: deleting it would delete the CNI of the cluster.

``own``
    ``cozystack.networking`` goes into ``bundles.disabledPackages`` and the whole object is rendered
    exactly as ``templates/bundles/system.yaml`` would, plus Hubble. On isp-full-generic the platform
    reads the API server endpoint and CIDRs from ConfigMap ``cozy-system/cozystack`` first (a lookup at
    reconcile time); ``hubble.clusterConfigMap`` carries that ConfigMap's data when it is set.

Where Cilium is not Cozystack-managed (isp-hosted, ``default``, networking disabled for ``patch``)
nothing is rendered and rule HUB-02 refuses the overlay.
"""

from __future__ import annotations

import re
from typing import Any

from renderer.errors import ERROR, WARNING, Finding
from renderer.load.yamlio import Path_
from renderer.model import (
    ARGO_SYNC_OPTIONS,
    FLUX_PRUNE,
    OWNERSHIP_ANNOTATION,
    PACKAGE_API,
    PATCH_ANNOTATIONS,
    Derived,
)
from renderer.resolve.features.context import FeatureContext
from renderer.resolve.platform import PlatformFacts, go_truthy
from renderer.tree import copy_tree, helm_merge

NETWORKING = "cozystack.networking"
CILIUM_VALUES = ("spec", "components", "cilium", "values", "cilium")
HUBBLE_PATH = CILIUM_VALUES + ("hubble",)

HELM_RESOURCE_POLICY = "helm.sh/resource-policy"
# The platform Package carries no wave (wave 0); a patch waits for it (and, with the README's health
# check, for it to be Ready, i.e. for the platform release to have created cozystack.networking).
OWN_SYNC_OPTIONS = "Prune=false,Delete=false"

USER_SUBTREES = ("relay", "ui", "metrics")


def variant_data(ctx: FeatureContext) -> dict[str, Any]:
    return ctx.variants.load("hubble/networking.yaml")[0]


def contribute(ctx: FeatureContext) -> None:
    overlay = ctx.overlay
    if overlay.get("hubble", "enabled") is not True:
        return
    ownership = overlay.get("hubble", "ownership") or "patch"
    data = variant_data(ctx)
    facts = ctx.requested
    hubble, hubble_origins = hubble_values(ctx)

    if ownership == "patch":
        if facts.networking_variant not in data["ciliumVariants"]:
            return  # nothing of ours to patch: HUB-02 reports why
        spec = {"components": {"cilium": {"values": {"cilium": {"hubble": hubble}}}}}
        annotations = dict(PATCH_ANNOTATIONS)
        origins: list[tuple[Path_, Path_]] = []
        role = "patch"
    else:
        system = data["systemVariants"].get(facts.system_variant) if facts.system_enabled else None
        if system is None:
            return  # the platform renders no Cilium-bearing networking here: HUB-02 reports why
        spec, origins = platform_networking_spec(facts, data, overlay.get("hubble", "clusterConfigMap") or {},
                                                 ctx)
        spec.setdefault("components", {}).setdefault("cilium", {}).setdefault("values", {}) \
            .setdefault("cilium", {})["hubble"] = hubble
        annotations = {
            HELM_RESOURCE_POLICY: "keep",
            ARGO_SYNC_OPTIONS: OWN_SYNC_OPTIONS,
            FLUX_PRUNE: "disabled",
            OWNERSHIP_ANNOTATION: "own",
        }
        ctx.disable(NETWORKING, overlay.locate(("hubble", "ownership")))
        role = "package"

    obj = {
        "apiVersion": PACKAGE_API,
        "kind": "Package",
        "metadata": {"name": NETWORKING, "annotations": annotations},
        "spec": spec,
    }
    route = ("hubble", "ownership") if overlay.get("hubble", "ownership") else ("hubble", "enabled")
    derived = [Derived(HUBBLE_PATH, "hubble", ("hubble", "enabled"), "hubble/values.yaml", (0,),
                       "recommended Hubble values"),
               Derived(("metadata", "annotations"), "hubble", route, note=f"ownership {ownership}")]
    if ownership != "patch":
        derived += _own_derivations(facts.system_variant, route)
    ctx.add(obj, overlay.locate(("hubble", "enabled")),
            hubble_origins + origins + [(("metadata",), ("hubble", "ownership")), (("spec",), ("hubble",))],
            role=role, derived=derived)


_KUBE_OVN = ("spec", "components", "kubeovn", "values", "kube-ovn")
_CIDRS = (("POD_CIDR", "podCIDR", "ipv4-pod-cidr"), ("POD_GATEWAY", "podGateway", "ipv4-pod-gateway"),
          ("SVC_CIDR", "serviceCIDR", "ipv4-svc-cidr"), ("JOIN_CIDR", "joinCIDR", "ipv4-join-cidr"))


def _own_derivations(system_variant: str, route: Path_) -> list[Derived]:
    """Where each part of an owned cozystack.networking comes from (``cozy-render explain --rendered``
    only; the render never reads these): the system variant's fixed values and the chart defaults in
    hubble/networking.yaml, or the overlay key or ConfigMap entry the value was copied from."""
    note = "cozystack.networking as templates/bundles/system.yaml renders it"
    data = "hubble/networking.yaml"
    system = (0, "systemVariants", system_variant)
    derived = [
        Derived(("spec",), "hubble", route, data, system, note),
        Derived(("spec", "variant"), "hubble", route, data, system + ("variant",), note),
        Derived(_KUBE_OVN, "hubble", route, data, system + ("kubeovn",), note),
        Derived(CILIUM_VALUES, "hubble", route, data, system + ("cilium",), note),
        Derived(CILIUM_VALUES + ("gatewayAPI", "enableAlpn"), "hubble", route, "catalogue.yaml",
                (0, "platform", "chartDefaults", "gateway", "http2"), "platform chart default gateway.http2"),
        Derived(_KUBE_OVN + ("MASTER_NODES",), "hubble", route, note=note,
                copied_from=("platform", "values", "networking", "kubeovn", "MASTER_NODES")),
        Derived(_KUBE_OVN + ("func", "ENABLE_OVN_IPSEC"), "hubble", route, note="networking.encryption.enabled",
                copied_from=("platform", "values", "networking", "encryption", "enabled")),
    ]
    for key, value_key, cm_key in _CIDRS:
        at = _KUBE_OVN + ("ipv4", key)
        derived += [
            Derived(at, "hubble", route, data, (0, "chartDefaults", "networking", value_key), "platform chart default"),
            Derived(at, "hubble", route, note=f"networking.{value_key}",
                    copied_from=("platform", "values", "networking", value_key)),
            Derived(at, "hubble", route, note=f"ConfigMap cozy-system/cozystack {cm_key}, read first",
                    copied_from=("hubble", "clusterConfigMap", cm_key)),
        ]
    return derived


def hubble_values(ctx: FeatureContext) -> tuple[dict[str, Any], list[tuple[Path_, Path_]]]:
    """The recommended block with the user's relay/ui/metrics merged onto it, then raw values last."""

    overlay = ctx.overlay
    values: dict[str, Any] = ctx.variants.load("hubble/values.yaml")[0]
    origins: list[tuple[Path_, Path_]] = []
    raw = overlay.get("hubble", "values") or {}
    # Raw values are merged last, so they win: list their origins first (equal prefixes: first wins).
    origins += [(HUBBLE_PATH + (key,), ("hubble", "values", key)) for key in raw]
    for key in USER_SUBTREES:
        user = overlay.get("hubble", key)
        if user is not None:
            values[key] = helm_merge(values.get(key) or {}, user)
            origins.append((HUBBLE_PATH + (key,), ("hubble", key)))
    values = helm_merge(values, raw)
    origins.append((HUBBLE_PATH, ("hubble",)))
    return values, origins


def platform_networking_spec(facts: PlatformFacts, data: dict[str, Any], config_map: dict[str, Any],
                             ctx: FeatureContext | None = None) -> tuple[dict[str, Any], list[tuple[Path_, Path_]]]:
    """``spec`` of cozystack.networking as templates/bundles/system.yaml renders it (reference (b)).

    Only for the isp-full* system variants; findings about the API server endpoint go to ``ctx``.
    """
    system = data["systemVariants"][facts.system_variant]
    values = helm_merge(data["chartDefaults"], facts.effective)
    spec: dict[str, Any] = {"variant": system["variant"]}
    origins: list[tuple[Path_, Path_]] = [(("spec", "variant"), ("platform", "variant"))]
    networking = values.get("networking")
    if not go_truthy(networking):
        return spec, origins  # `if .Values.networking` guards the whole components block
    cm = config_map if system.get("configMapFirst") else {}

    def cidr(value_key: str, cm_key: str) -> Any:
        # Sprig `default`: the ConfigMap value wins only when non-empty.
        return cm.get(cm_key) or networking.get(value_key)

    kube_ovn: dict[str, Any] = {"ipv4": {
        "POD_CIDR": cidr("podCIDR", "ipv4-pod-cidr"),
        "POD_GATEWAY": cidr("podGateway", "ipv4-pod-gateway"),
        "SVC_CIDR": cidr("serviceCIDR", "ipv4-svc-cidr"),
        "JOIN_CIDR": cidr("joinCIDR", "ipv4-join-cidr"),
    }}
    master_nodes = (networking.get("kubeovn") or {}).get("MASTER_NODES") \
        if isinstance(networking.get("kubeovn"), dict) else None
    if go_truthy(master_nodes):
        kube_ovn["MASTER_NODES"] = master_nodes
    kube_ovn.update(system.get("kubeovn") or {})
    # Version-true: only charts whose system.yaml reads networking.encryption (main, not v1.6.2)
    # render the KubeOVN IPsec switch, and only they thread gateway.http2 into Cilium.
    encryption = networking.get("encryption")
    if facts.reads("networking.encryption") and isinstance(encryption, dict) and \
            go_truthy(encryption.get("enabled")):
        kube_ovn["func"] = {"ENABLE_OVN_IPSEC": True}

    cilium: dict[str, Any] = {}
    if "k8sServiceHost" in system["cilium"]:
        cilium["k8sServiceHost"] = system["cilium"]["k8sServiceHost"]
        cilium["k8sServicePort"] = system["cilium"]["k8sServicePort"]
    else:
        endpoint = cm.get("api-server-endpoint") or (values.get("publishing") or {}).get("apiServerEndpoint")
        from_cm = bool(cm.get("api-server-endpoint"))
        where = ("hubble", "clusterConfigMap", "api-server-endpoint") if from_cm else \
            ("platform", "values", "publishing", "apiServerEndpoint")
        host, port = _endpoint_host_port(endpoint, system["defaultApiPort"], where, ctx)
        cilium["k8sServiceHost"] = host
        cilium["k8sServicePort"] = port
        origins += [(CILIUM_VALUES + ("k8sServiceHost",), where), (CILIUM_VALUES + ("k8sServicePort",), where)]
    cilium["cgroup"] = copy_tree(system["cilium"]["cgroup"])
    if facts.reads("gateway.http2"):
        cilium["gatewayAPI"] = {"enableAlpn": (values.get("gateway") or {}).get("http2")}
        origins.append((CILIUM_VALUES + ("gatewayAPI", "enableAlpn"), ("platform", "values", "gateway", "http2")))
    origins.append((("spec", "components", "kubeovn"), ("platform", "values", "networking")))
    spec["components"] = {
        "kubeovn": {"values": {"kube-ovn": kube_ovn}},
        "cilium": {"values": {"cilium": cilium}},
    }
    return spec, origins


def _endpoint_host_port(endpoint: Any, default_port: str, where: Path_,
                        ctx: FeatureContext | None) -> tuple[str, str]:
    if not endpoint:
        _note(ctx, WARNING, "no API server endpoint (publishing.apiServerEndpoint): the platform renders "
                            "cilium.k8sServiceHost \"\" on isp-full-generic; set https://<host>:<port>", where)
        return "", default_port
    try:
        url_host = go_url_host(str(endpoint))
    except ValueError as exc:
        _note(ctx, ERROR, f"API server endpoint {endpoint!r} cannot be parsed the way the platform chart does "
                          f"(Sprig urlParse: {exc}), which fails the whole platform render; "
                          "write it as https://<host>:<port>", where)
        return "", default_port
    parts = url_host.split(":")
    host = parts[0]
    port = parts[1] if len(parts) > 1 else default_port
    if not host:
        # Go's url.Parse leaves the host empty for two reasons: no `scheme://` at all ("api.example.org:6443"
        # reads "api.example.org" as the scheme), or a scheme with nothing before the port ("https://:6443").
        why = "has an empty host" if _WITH_AUTHORITY.match(str(endpoint)) else "has no scheme"
        _note(ctx, WARNING, f"API server endpoint {endpoint!r} {why}, so the platform renders "
                            "cilium.k8sServiceHost \"\"; write it as https://<host>:<port>", where)
    return host, port


_WITH_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _note(ctx: FeatureContext | None, severity: str, message: str, where: Path_) -> None:
    if ctx is not None:
        ctx.findings.append(Finding("OVL-ENDPOINT", message, ctx.overlay.locate(where), severity))


def go_url_host(raw: str) -> str:
    """``url.Host`` as Go's net/url ``Parse`` computes it (what Sprig ``urlParse`` returns as ``host``):
    the chart model's parser (``renderer.platform_chart.gourl``), so PLT-13 and this feature agree.

    Raises ValueError with Go's error where Go returns one (Sprig then fails the template).
    """
    from renderer.platform_chart import gourl

    found = gourl.parse(raw)
    if found.error is not None:
        raise ValueError(found.error)
    return found.host


