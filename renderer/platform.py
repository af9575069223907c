"""What the platform chart will do with the values we render: the effective values and bundle facts.

Effective values = chart defaults, then the platform variant's values file, then the rendered
Package values (Helm semantics: maps merge, lists replace, null deletes). Features and rules ask
these questions instead of re-reading raw overlay keys.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from renderer.model import PLATFORM_PACKAGE
from renderer.tree import helm_merge

ISP_FULL_VARIANTS = ("isp-full", "isp-full-generic")
# system.yaml networking variant per bundles.system.variant (reference (b)).
NETWORKING_VARIANT = {"isp-full": "kubeovn-cilium", "isp-full-generic": "kubeovn-cilium-generic",
                      "isp-hosted": "noop"}


class PlatformFacts:
    def __init__(self, catalogue: dict[str, Any], variant: str | None, values: dict[str, Any] | None) -> None:
        self.catalogue = catalogue
        self.variant = variant or "default"
        self.values = values or {}

    @classmethod
    def from_objects(cls, catalogue: dict[str, Any], objects: list[Any]) -> PlatformFacts:
        for e in objects:
            if e.is_package(PLATFORM_PACKAGE):
                spec = e.obj.get("spec") or {}
                values = ((spec.get("components") or {}).get("platform") or {}).get("values")
                return cls(catalogue, spec.get("variant"), values if isinstance(values, dict) else {})
        return cls(catalogue, None, {})

    @property
    def known_variant(self) -> bool:
        return self.variant in self.catalogue["platform"]["variants"]

    @cached_property
    def effective(self) -> dict[str, Any]:
        platform = self.catalogue["platform"]
        variant_values = platform["variantValues"].get(self.variant, {})
        return helm_merge(helm_merge(platform["chartDefaults"], variant_values), self.values)

    def get(self, *path: str, default: Any = None) -> Any:
        node: Any = self.effective
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node

    @property
    def system_enabled(self) -> bool:
        return self.get("bundles", "system", "enabled") is True

    @property
    def system_variant(self) -> str:
        return str(self.get("bundles", "system", "variant", default=""))

    @property
    def system_renders(self) -> bool:
        return self.system_enabled

    @property
    def iaas_renders(self) -> bool:
        """iaas.yaml renders (and its guards run) only when iaas is on; it fails unless system is on too."""
        return self.get("bundles", "iaas", "enabled") is True

    @property
    def iaas_valid(self) -> bool:
        return self.iaas_renders and self.system_enabled and self.system_variant in ISP_FULL_VARIANTS

    def _list(self, key: str) -> list[str]:
        value = self.get("bundles", key, default=[])
        return [str(v) for v in value] if isinstance(value, list) else []

    @property
    def enabled_packages(self) -> list[str]:
        return self._list("enabledPackages")

    @property
    def disabled_packages(self) -> list[str]:
        return self._list("disabledPackages")

    def is_disabled(self, name: str) -> bool:
        return name in self.disabled_packages

    def optional_enabled(self, name: str) -> bool:
        """An optional package renders: in enabledPackages and not in disabledPackages (disabled wins)."""
        return name in self.enabled_packages and name not in self.disabled_packages

    @property
    def networking_variant(self) -> str | None:
        """Variant of the cozystack.networking Package the platform renders, or None when it renders none."""
        if not self.system_enabled or self.is_disabled("cozystack.networking"):
            return None
        return NETWORKING_VARIANT.get(self.system_variant)

    @property
    def multus_rendered(self) -> bool:
        return self.system_enabled and self.system_variant in ISP_FULL_VARIANTS and \
            not self.is_disabled("cozystack.multus")

    @property
    def gpu_operator_bundle_enabled(self) -> bool:
        return self.iaas_valid and self.optional_enabled("cozystack.gpu-operator")

    @property
    def gpu_operator_variant(self) -> str:
        value = self.get("bundles", "iaas", "gpuOperatorVariant")
        return "default" if value in (None, "") else str(value)

    # ---- what the platform release renders (reference (b); names and variants from the catalogue) ----

    def bundle_renders(self, bundle: str) -> bool:
        """Whether the bundle's template emits Packages (its fail guards pass; PLT-04/05/06 otherwise)."""
        if bundle == "system":
            return self.system_enabled and self.system_variant in self._renders("system").get("perVariant", {})
        if bundle == "iaas":
            return self.iaas_valid
        if bundle in ("paas", "naas"):
            return self.get("bundles", bundle, "enabled") is True and self.system_enabled and \
                self.system_variant in SYSTEM_VARIANTS
        return False

    def _renders(self, bundle: str) -> dict[str, Any]:
        return (self.catalogue["platform"].get("renders") or {}).get(bundle) or {}

    def optional_packages(self, bundle: str) -> list[str]:
        """Names the bundle emits only from enabledPackages (optional helper, gates, gpu-operator)."""
        spec = self._renders(bundle)
        names = list(spec.get("optional") or []) + list(spec.get("gates") or {})
        if spec.get("gpuOperator"):
            names.append(spec["gpuOperator"])
        return names

    def default_packages(self, bundle: str) -> list[str]:
        """Names the bundle emits through the default helper on any of its variants (ignore enabledPackages)."""
        spec = self._renders(bundle)
        names = dict(spec.get("common") or {})
        for per_variant in (spec.get("perVariant") or {}).values():
            names.update(per_variant or {})
        return list(names)

    def known_platform_names(self) -> set[str]:
        """Every name some configuration of the platform may render (for PLT-09 and PLT-08)."""
        names: set[str] = set()
        for bundle in BUNDLES:
            names.update(self.default_packages(bundle))
            names.update(self.optional_packages(bundle))
            for emitted in (self._renders(bundle).get("gates") or {}).values():
                names.update(emitted)
        return names

    @cached_property
    def rendered_packages(self) -> dict[str, RenderedPackage]:
        """The Packages the platform release renders under the effective values, by name.

        ``values`` holds the ``spec.components`` leaves the platform sets, only where they can be
        decided offline (reference (b) "Other Packages the platform renders with spec.components").
        Names the reference does not list (keycloak, capi-*, paas) are absent.
        """
        return self._rendered(set(self.disabled_packages))

    @cached_property
    def rendered_if_none_disabled(self) -> dict[str, RenderedPackage]:
        """What the platform release would render were ``bundles.disabledPackages`` empty: the Packages
        Helm created or may create again (a Package taken over by disabling it included)."""
        return self._rendered(set())

    def _rendered(self, disabled: set[str]) -> dict[str, RenderedPackage]:
        out: dict[str, RenderedPackage] = {}
        enabled = set(self.enabled_packages)
        for bundle in BUNDLES:
            if not self.bundle_renders(bundle):
                continue
            spec = self._renders(bundle)
            entries = dict(spec.get("common") or {})
            entries.update((spec.get("perVariant") or {}).get(self.system_variant) or {})
            for name, entry in entries.items():
                entry = entry or {}
                if name in disabled or ("when" in entry and not go_truthy(self.get(*entry["when"].split(".")))):
                    continue
                variant = self._choose_variant(entry.get("variant"))
                out[name] = RenderedPackage(name, variant, bundle, self._platform_values(name), None)
            for name in spec.get("optional") or []:
                if name in enabled and name not in disabled:
                    out[name] = RenderedPackage(name, "default", bundle, {}, name)
            # The bootbox gate reads only enabledPackages; each emitted name obeys disabledPackages alone.
            for gate, emitted in (spec.get("gates") or {}).items():
                if gate in enabled:
                    for name in emitted:
                        if name not in disabled:
                            out[name] = RenderedPackage(name, "default", bundle, {}, gate)
            gpu = spec.get("gpuOperator")
            if gpu and gpu in enabled and gpu not in disabled:
                out[gpu] = RenderedPackage(gpu, self.gpu_operator_variant, bundle, {}, gpu)
        return out

    def _choose_variant(self, variant: Any) -> str:
        if isinstance(variant, dict):
            chosen = variant.get("then") if go_truthy(self.get(*str(variant["when"]).split("."))) \
                else variant.get("else")
            return str(chosen)
        return str(variant or "default")

    def stage_cni_plugins(self) -> tuple[bool | None, bool]:
        """(value the platform renders for multus stageCniPlugins, whether the set value is readable).

        ``_helpers.tpl`` cozystack.platform.stageCniPlugins: null/absent follows the variant (on for
        both isp-full variants); true/yes/on/1 and false/no/off/0 case-insensitively; anything else
        fails the render (PLT-10).
        """
        networking = self.get("networking")
        if not isinstance(networking, dict) or networking.get("stageCniPlugins") is None:
            return True, True
        text = helm_string(networking["stageCniPlugins"]).lower()
        if text in STAGE_CNI_TRUE:
            return True, True
        if text in STAGE_CNI_FALSE:
            return False, True
        return None, False

    def _platform_values(self, name: str) -> dict[tuple[str, ...], Any]:
        """spec.components leaves the platform renders for ``name`` (reference (b) table); offline-decidable only."""
        generic = self.system_variant == "isp-full-generic"
        rendered: dict[str, Any] = {}
        if name == "cozystack.networking":
            # system.yaml: isp-full fixes the Talos endpoint; generic reads a ConfigMap at reconcile
            # time for the endpoint and CIDRs, which cannot be known offline.
            cilium: dict[str, Any] = {"cgroup": {"autoMount": {"enabled": generic}}}
            if self.get("gateway", "http2") is not None:
                cilium["gatewayAPI"] = {"enableAlpn": self.get("gateway", "http2")}
            kubeovn: dict[str, Any] = {}
            if self.system_variant == "isp-full":
                cilium.update(k8sServiceHost="localhost", k8sServicePort="7445")
                ipv4 = {key: self.get("networking", source) for key, source in
                        (("POD_CIDR", "podCIDR"), ("POD_GATEWAY", "podGateway"),
                         ("SVC_CIDR", "serviceCIDR"), ("JOIN_CIDR", "joinCIDR"))}
                ipv4 = {k: v for k, v in ipv4.items() if v is not None}
                if ipv4:
                    kubeovn["ipv4"] = ipv4
            if generic:
                kubeovn["MASTER_NODES_LABEL"] = "node-role.kubernetes.io/control-plane=true"
            if self.get("networking", "encryption", "enabled") is True:
                kubeovn["func"] = {"ENABLE_OVN_IPSEC": True}
            if self.system_variant in ISP_FULL_VARIANTS:
                rendered = {"cilium": {"values": {"cilium": cilium}}}
                if kubeovn:
                    rendered["kubeovn"] = {"values": {"kube-ovn": kubeovn}}
        elif name == "cozystack.multus":
            value, readable = self.stage_cni_plugins()
            if readable:
                rendered = {"multus": {"values": {"stageCniPlugins": value}}}
        elif name == "cozystack.linstor" and generic:
            rendered = {"linstor": {"values": {"talos": {"enabled": False}}}}
        elif name == "cozystack.cozystack-engine":
            if generic:
                rendered["cozystack-api"] = {"values": {"cozystackAPI": {
                    "nodeSelector": {"node-role.kubernetes.io/control-plane": "true"}}}}
            if go_truthy(self.get("telemetry", "disabled")):
                rendered["cozystack-controller"] = {"values": {"cozystackController": {"disableTelemetry": True}}}
        elif name == "cozystack.tenant-application":
            oidc = "true" if go_truthy(self.get("authentication", "oidc", "enabled")) else "false"
            rendered = {"tenant": {"values": {"_cluster": {"oidc-enabled": oidc}}}}
        elif name == "cozystack.monitoring-agents":
            rendered = {"monitoring-agents": {"values": {"global": {"target": "tenant-root"}}}}
        elif name == "cozystack.backupstrategy-controller":
            storage = self.get("backupStorage")
            if go_truthy(storage):
                rendered = {"backupstrategy-controller": {"values": {"backupStorage": storage}}}
        elif name == "cozystack.kubevirt":
            # iaas.yaml: (.Values.resources.cpuAllocationRatio | int) when truthy. The GPU wiring the
            # same Package carries is the GPU rules' concern (GPU-14..18).
            ratio = helm_int(self.get("resources", "cpuAllocationRatio"))
            if ratio:
                rendered = {"kubevirt": {"values": {"cpuAllocationRatio": ratio}}}
        # cozystack.ouroboros (proxy target from the ingress name) and the gpu-operator vgpu knobs are
        # left out: the first's source key is not in the reference, the second is GPU-11/GPU-17's.
        return leaves(rendered)


BUNDLES = ("system", "iaas", "paas", "naas")
# paas.yaml / naas.yaml variant guard (PLT-06); system.yaml has branches for exactly these.
SYSTEM_VARIANTS = ("isp-full", "isp-full-generic", "isp-hosted")
STAGE_CNI_TRUE = ("true", "yes", "on", "1")
STAGE_CNI_FALSE = ("false", "no", "off", "0")


class RenderedPackage:
    """A Package the platform release renders: its variant and the component values it sets."""

    __slots__ = ("bundle", "gate", "name", "values", "variant")

    def __init__(self, name: str, variant: str, bundle: str, values: dict[tuple[str, ...], Any],
                 gate: str | None) -> None:
        self.name = name
        self.variant = variant
        self.bundle = bundle
        self.values = values  # leaf path under spec.components -> value
        self.gate = gate  # the enabledPackages entry that makes it render, for optional packages

    def __repr__(self) -> str:
        return f"RenderedPackage({self.name!r}, {self.variant!r}, {self.bundle!r})"


def leaves(tree: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Map every non-mapping value to its key path (Helm merges maps, so conflicts are per leaf)."""
    if isinstance(tree, dict) and tree:
        out: dict[tuple[str, ...], Any] = {}
        for key, value in tree.items():
            out.update(leaves(value, prefix + (key,)))
        return out
    return {prefix: tree} if prefix else {}


def go_truthy(value: Any) -> bool:
    """Go template truthiness: false, 0, nil and empty strings/collections are false."""
    return bool(value)


def helm_string(value: Any) -> str:
    """Sprig toString as seen after Helm's YAML->JSON values round trip (numbers are float64)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def helm_int(value: Any) -> int | None:
    """Sprig ``int`` for the values we can convert; None when the result is not knowable here."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None
