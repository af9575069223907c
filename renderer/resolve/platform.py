"""What the platform chart will do with the values we render: the effective values and bundle facts.

Effective values = the chart version's values.yaml, then the platform variant's values file, then
the rendered Package values (Helm semantics: maps merge, lists replace, null deletes). Which
Packages the chart emits, with which variant and under which condition, is generated from the
chart itself (``renderer.platform_chart.model``); values are read with Go template truthiness, as
the chart reads them. Features and rules ask these questions instead of re-reading raw overlay keys.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from renderer.errors import Finding
from renderer.model import GPU_OPERATOR, PLATFORM_PACKAGE
from renderer.platform_chart.model import RenderedPackage, as_helm_reads, go_format
from renderer.tree import dig, helm_merge

if TYPE_CHECKING:
    from renderer.platform_chart.model import ChartModel, ChartProblem

__all__ = ["PlatformFacts", "PlatformView", "RenderedPackage", "go_format", "go_truthy", "helm_int", "helm_string",
           "leaves"]

ISP_FULL_VARIANTS = ("isp-full", "isp-full-generic")
# system.yaml networking variant per bundles.system.variant (reference (b)).
NETWORKING_VARIANT = {"isp-full": "kubeovn-cilium", "isp-full-generic": "kubeovn-cilium-generic",
                      "isp-hosted": "noop"}


class PlatformView(NamedTuple):
    """What the platform release renders, from ONE source, for every rule that needs it (PLT-11,
    PLT-12, the PKG-* variant and dependency rules): the chart model (``PlatformFacts.view``, the
    render path) or the real chart rendered by helm (``renderer.effective.chart_check.platform_view``).

    ``not_compared``: (Package, leaf key) pairs whose rendered value depends on cluster state the
    source could not see (isp-full-generic reads a ConfigMap with ``lookup``), so no rule compares
    them. ``findings``: what building the view found (PLT-CHART when helm's chart fails; then
    ``packages`` are the model's, the best offline answer)."""

    source: str  # "model" | "helm"
    version: str | None
    packages: dict[str, RenderedPackage]
    not_compared: frozenset[tuple[str, str]] = frozenset()
    findings: tuple[Finding, ...] = ()


class PlatformFacts:
    """The platform chart's view of one cluster, for the chart ``version`` it runs.

    Names, variants and emission conditions come from the catalogue generated from that chart
    version (``renderer/_generated/platform/<version>.json``, ``renderer.platform_chart.model``);
    component values the platform sets are modelled in ``_platform_values``. ``version`` defaults to
    the shipped default (``renderer.platform_chart.DEFAULT_VERSION``).
    """

    def __init__(self, catalogue: dict[str, Any], variant: str | None, values: dict[str, Any] | None, *,
                 version: str | None = None) -> None:
        self.catalogue = catalogue
        self.variant = variant or "default"
        self.values = values or {}
        self.version = version

    @classmethod
    def from_objects(cls, catalogue: dict[str, Any], objects: list[Any], *,
                     version: str | None = None) -> "PlatformFacts":
        for e in objects:
            if e.is_package(PLATFORM_PACKAGE):
                spec = e.obj.get("spec") or {}
                values = ((spec.get("components") or {}).get("platform") or {}).get("values")
                return cls(catalogue, spec.get("variant"), values if isinstance(values, dict) else {},
                           version=version)
        return cls(catalogue, None, {}, version=version)

    @cached_property
    def chart(self) -> "ChartModel":
        from renderer.platform_chart.model import chart_model

        return chart_model(self.version)

    @property
    def known_variant(self) -> bool:
        return self.variant in self.catalogue["platform"]["variants"]

    @cached_property
    def effective(self) -> dict[str, Any]:
        """The chart defaults the rules reason about (catalogue ``platform.chartDefaults``), then the
        variant's values file, then the Package values. Keys absent here were not set by anyone the
        rules care about; ``chart_values`` has every default of the chart version."""
        platform = self.catalogue["platform"]
        variant_values = self.chart.data["variantValues"].get(self.variant, {})
        # Numbers as helm holds them (float64: an integer beyond 2^53 rounds), as chart_values.
        return as_helm_reads(helm_merge(helm_merge(platform["chartDefaults"], variant_values), self.values))

    @cached_property
    def chart_values(self) -> dict[str, Any]:
        """Exactly what the chart sees: values.yaml, values-<variant>.yaml, the Package values."""
        return self.chart.effective_values(self.variant, self.values)

    def get(self, *path: str, default: Any = None) -> Any:
        return dig(self.effective, *path, default=default)

    def chart_get(self, *path: str, default: Any = None) -> Any:
        return dig(self.chart_values, *path, default=default)

    def reads(self, dotted_path: str) -> bool:
        """Whether this chart version reads a platform value at all (version-aware rules)."""
        return per_chart(self.chart, ("reads", dotted_path), lambda: self.chart.reads(dotted_path))

    @property
    def system_enabled(self) -> bool:
        """Go template truthiness, as ``{{ if .Values.bundles.system.enabled }}`` reads it: a quoted
        "true" (or "false"!) turns the bundle on."""
        return go_truthy(self.get("bundles", "system", "enabled"))

    @property
    def system_variant(self) -> str:
        return str(self.get("bundles", "system", "variant", default=""))

    @property
    def system_renders(self) -> bool:
        return self.system_enabled

    @property
    def iaas_renders(self) -> bool:
        """iaas.yaml renders (and its guards run) only when iaas is on; it fails unless system is on too."""
        return go_truthy(self.get("bundles", "iaas", "enabled"))

    @property
    def iaas_valid(self) -> bool:
        return self.iaas_renders and self.system_enabled and self.system_variant in ISP_FULL_VARIANTS

    def _list(self, key: str) -> list[str]:
        value = self.get("bundles", key, default=[])
        # Sprig `has` compares with the item's own type: only string entries ever name a Package.
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

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
        rendered = self.rendered_packages.get("cozystack.networking")
        return rendered.variant if rendered is not None else None

    @property
    def multus_rendered(self) -> bool:
        return "cozystack.multus" in self.rendered_packages

    @property
    def gpu_operator_bundle_enabled(self) -> bool:
        return self.iaas_valid and self.optional_enabled(GPU_OPERATOR)

    @property
    def gpu_operator_variant(self) -> str:
        value = self.get("bundles", "iaas", "gpuOperatorVariant")
        return "default" if not go_truthy(value) else go_format(value)

    # ---- what the platform release renders (generated from the chart version's templates) ----

    def bundle_renders(self, bundle: str) -> bool:
        """Whether the bundle's template emits Packages (its fail guards pass; PLT-04/05/06 otherwise)."""
        if bundle == "system":
            return self.system_enabled and self.system_variant in SYSTEM_VARIANTS
        if bundle == "iaas":
            return self.iaas_valid
        if bundle in ("paas", "naas"):
            return go_truthy(self.get("bundles", bundle, "enabled")) and self.system_enabled and \
                self.system_variant in SYSTEM_VARIANTS
        return False

    def optional_packages(self, bundle: str) -> list[str]:
        """Names the bundle emits only from enabledPackages (optional helper, gates, gpu-operator)."""
        return list(per_chart(self.chart, ("optional", bundle), lambda: self.chart.optional_packages(bundle)))

    def default_packages(self, bundle: str) -> list[str]:
        """Names the bundle emits whatever enabledPackages says (only disabledPackages affects them)."""
        return list(per_chart(self.chart, ("default", bundle), lambda: self.chart.default_packages(bundle)))

    def known_platform_names(self) -> set[str]:
        """Every name some configuration of this chart version may render (for PLT-09 and PLT-08)."""
        return set(self.chart.emits)

    @cached_property
    def _evaluated(self) -> "tuple[dict[str, RenderedPackage], list[ChartProblem]]":
        # A render builds several PlatformFacts over the same values (resolve, emit, rules): the
        # chart's answer depends only on the version, the variant and the values, so it is shared.
        import json

        key = (self.chart.version, self.variant, json.dumps(self.values, sort_keys=True, default=str))
        found = _EVALUATIONS.get(key)
        if found is None:
            found = self.chart.evaluate(self.chart_values, self._platform_values)
            if len(_EVALUATIONS) > 64:
                _EVALUATIONS.clear()
            _EVALUATIONS[key] = found
        return found

    @property
    def rendered_packages(self) -> dict[str, RenderedPackage]:
        """The Packages the platform release renders under the effective values, by name.

        ``values`` holds the ``spec.components`` leaves the platform sets, only where they can be
        decided offline (the isp-full-generic endpoint and CIDRs come from a ConfigMap in the cluster).
        """
        return self._evaluated[0]

    @cached_property
    def view(self) -> PlatformView:
        """The model's answer to "what does the platform render" (no helm: render, cmp generate)."""
        return PlatformView("model", self.chart.version, self.rendered_packages)

    @cached_property
    def rendered_if_none_disabled(self) -> dict[str, RenderedPackage]:
        """What the platform release would render were ``bundles.disabledPackages`` empty: the Packages
        Helm created or may create again (a Package taken over by disabling it included)."""
        if not self.disabled_packages:
            return self.rendered_packages
        values = self.chart_values
        bundles = {k: v for k, v in (values.get("bundles") or {}).items() if k != "disabledPackages"}
        return self.chart.evaluate({**values, "bundles": bundles}, self._platform_values)[0]

    @property
    def chart_problems(self) -> "list[ChartProblem]":
        """Where the chart itself would fail on these values (fail guards and Go template errors)."""
        return self._evaluated[1]

    def stage_cni_plugins(self) -> tuple[bool | None, bool]:
        """(value the platform renders for multus stageCniPlugins, whether the set value is readable).

        ``_helpers.tpl`` cozystack.platform.stageCniPlugins: null/absent follows the variant (on for
        both isp-full variants); true/yes/on/1 and false/no/off/0 case-insensitively; anything else
        fails the render (PLT-10). A version that does not read the key stages nothing.
        """
        if not self.reads("networking.stageCniPlugins"):
            # A chart version without the staging switch (v1.6.2): its multus Package stages no
            # reference plugins, whatever the value says (PLT-14 warns about the key).
            return False, True
        networking = self.get("networking")
        if not isinstance(networking, dict) or networking.get("stageCniPlugins") is None:
            return True, True
        text = go_format(networking["stageCniPlugins"]).lower()
        if text in STAGE_CNI_TRUE:
            return True, True
        if text in STAGE_CNI_FALSE:
            return False, True
        return None, False

    def _platform_values(self, name: str) -> dict[tuple[str, ...], Any]:
        """spec.components leaves the platform renders for ``name`` (reference (b) table); offline-decidable only."""
        if name not in _COMPONENT_VALUES_OF:
            return {}  # the platform sets no component values of this Package (the branches below)
        generic = self.system_variant == "isp-full-generic"
        rendered: dict[str, Any] = {}
        if name == "cozystack.networking":
            # system.yaml: isp-full fixes the Talos endpoint; generic reads a ConfigMap at reconcile
            # time for the endpoint and CIDRs, which cannot be known offline.
            cilium: dict[str, Any] = {"cgroup": {"autoMount": {"enabled": generic}}}
            if self.reads("gateway.http2") and self.chart_get("gateway", "http2") is not None:
                cilium["gatewayAPI"] = {"enableAlpn": self.chart_get("gateway", "http2")}
            kubeovn: dict[str, Any] = {}
            if self.system_variant == "isp-full":
                cilium.update(k8sServiceHost="localhost", k8sServicePort="7445")
                ipv4 = {key: self.chart_get("networking", source) for key, source in
                        (("POD_CIDR", "podCIDR"), ("POD_GATEWAY", "podGateway"),
                         ("SVC_CIDR", "serviceCIDR"), ("JOIN_CIDR", "joinCIDR"))}
                ipv4 = {k: v for k, v in ipv4.items() if v is not None}
                if ipv4:
                    kubeovn["ipv4"] = ipv4
            if generic:
                kubeovn["MASTER_NODES_LABEL"] = "node-role.kubernetes.io/control-plane=true"
            encryption = self.chart_get("networking", "encryption")
            if self.reads("networking.encryption") and isinstance(encryption, dict) and \
                    go_truthy(encryption.get("enabled")):
                kubeovn["func"] = {"ENABLE_OVN_IPSEC": True}
            # system.yaml builds the components only `if .Values.networking` (networking: null -> none).
            if self.system_variant in ISP_FULL_VARIANTS and go_truthy(self.chart_get("networking")):
                rendered = {"cilium": {"values": {"cilium": cilium}}}
                if kubeovn:
                    rendered["kubeovn"] = {"values": {"kube-ovn": kubeovn}}
        elif name == "cozystack.multus" and self.reads("networking.stageCniPlugins"):
            value, readable = self.stage_cni_plugins()
            if readable:
                rendered = {"multus": {"values": {"stageCniPlugins": value}}}
        elif name == "cozystack.linstor" and generic:
            rendered = {"linstor": {"values": {"talos": {"enabled": False}}}}
        elif name == "cozystack.cozystack-engine":
            if generic:
                rendered["cozystack-api"] = {"values": {"cozystackAPI": {
                    "nodeSelector": {"node-role.kubernetes.io/control-plane": "true"}}}}
            if self.reads("telemetry.disabled") and go_truthy(self.chart_get("telemetry", "disabled")):
                rendered["cozystack-controller"] = {"values": {"cozystackController": {"disableTelemetry": True}}}
        elif name == "cozystack.tenant-application":
            oidc = "true" if go_truthy(self.chart_get("authentication", "oidc", "enabled")) else "false"
            rendered = {"tenant": {"values": {"_cluster": {"oidc-enabled": oidc}}}}
        elif name == "cozystack.monitoring-agents":
            rendered = {"monitoring-agents": {"values": {"global": {"target": "tenant-root"}}}}
        elif name == "cozystack.backupstrategy-controller":
            storage = self.chart_get("backupStorage")
            if go_truthy(storage):
                rendered = {"backupstrategy-controller": {"values": {"backupStorage": storage}}}
        elif name == "cozystack.kubevirt":
            # iaas.yaml: (.Values.resources.cpuAllocationRatio | int) when truthy, plus the GPU wiring
            # when gpu-operator is bundle-enabled: a hand-written pciHostDevices list replaces the
            # platform's (lists replace), so it is a conflict (PLT-11), not an addition.
            kubevirt: dict[str, Any] = {}
            # `if .Values.resources.cpuAllocationRatio` is Go truthiness ("0" is true), then Sprig
            # `int`: "010" renders 8, "4.5" renders 0, true renders 1.
            ratio = self.chart_get("resources", "cpuAllocationRatio")
            if go_truthy(ratio):
                kubevirt["cpuAllocationRatio"] = helm_int(ratio)
            kubevirt.update(self._gpu_wiring())
            if kubevirt:
                rendered = {"kubevirt": {"values": kubevirt}}
        elif name == "cozystack.ouroboros":
            # system.yaml: the proxy target is the host ingress-nginx Service of publishing.ingressName.
            namespace = self.chart_get("publishing", "ingressName")
            namespace = namespace if go_truthy(namespace) else "tenant-root"
            namespace = go_format(namespace)
            service = (namespace[len("tenant-"):] if namespace.startswith("tenant-") else namespace) + \
                "-ingress-controller"
            rendered = {"ouroboros": {"values": {"ouroboros": {"proxy": {"target": {
                "namespace": namespace, "serviceName": service}}}}}}
        elif name == GPU_OPERATOR:
            # iaas.yaml forwards the vGPU knobs into the Package it renders (vgpu route only).
            overrides = self._vgpu_overrides()
            if overrides:
                rendered = {"gpu-operator": {"values": {"gpu-operator": overrides}}}
        return leaves(rendered)

    def _gpu(self) -> dict[str, Any]:
        gpu = self.chart_get("gpu")
        return gpu if isinstance(gpu, dict) else {}

    def _vgpu_overrides(self) -> dict[str, Any]:
        """iaas.yaml's `$gpuOperatorOverrides` on the vgpu route: the whole gpu.vgpuManager map when
        any of repository, version, imagePullSecrets or a non-default image is set, and
        vgpuDeviceManager.enabled: true when the value is Go-truthy."""
        if not (self.gpu_operator_bundle_enabled and self.gpu_operator_variant == "vgpu"):
            return {}
        gpu = self._gpu()
        manager = gpu.get("vgpuManager")
        manager = manager if go_truthy(manager) else {}
        overrides: dict[str, Any] = {}
        if isinstance(manager, dict):
            image = manager.get("image")
            customized = "image" in manager and (go_format(image) if go_truthy(image) else "") != "vgpu-manager"
            if any(go_truthy(manager.get(k)) for k in ("repository", "version", "imagePullSecrets")) or customized:
                overrides["vgpuManager"] = manager
        device_manager = gpu.get("vgpuDeviceManager")
        if isinstance(device_manager, dict) and go_truthy(device_manager.get("enabled")):
            overrides["vgpuDeviceManager"] = {"enabled": True}
        return overrides

    def _gpu_wiring(self) -> dict[str, Any]:
        """iaas.yaml's KubeVirt GPU wiring when gpu-operator is bundle-enabled (lists, compared whole)."""
        if not self.gpu_operator_bundle_enabled:
            return {}
        gpu = self._gpu()
        permitted_raw = gpu.get("permittedHostDevices")
        permitted: dict[str, Any] = permitted_raw if isinstance(permitted_raw, dict) else {}
        user_pci = _as_list(permitted.get("pciHostDevices"))
        user_mdev = _as_list(permitted.get("mediatedDevices"))
        replace = go_truthy(gpu.get("replaceDefaults"))
        wiring: dict[str, Any] = {"extraFeatureGates": ["HostDevices"]}
        files = self.chart.data["files"]
        devices: dict[str, Any] = {}
        if self.gpu_operator_variant == "default":
            defaults = files.get("files/gpu-passthrough-defaults.yaml") or {}
            pci = ([] if replace else list(defaults.get("pciHostDevices") or [])) + user_pci
        else:
            # vgpu: the platform's mdev profiles only with the device manager on and the defaults kept;
            # the user's lists after them, and mediatedDevicesConfiguration as the user wrote it.
            device_manager = gpu.get("vgpuDeviceManager")
            manager_on = isinstance(device_manager, dict) and go_truthy(device_manager.get("enabled"))
            vgpu_defaults = files.get("files/gpu-vgpu-defaults.yaml") or {}
            mdev = list((vgpu_defaults.get("permittedHostDevices") or {}).get("mediatedDevices") or []) \
                if manager_on and not replace else []
            mdev += user_mdev
            pci = user_pci
            if mdev:
                devices["mediatedDevices"] = mdev
            configuration = gpu.get("mediatedDevicesConfiguration")
            if isinstance(configuration, dict) and configuration:
                wiring["mediatedDevicesConfiguration"] = configuration
        if pci:
            devices = {"pciHostDevices": pci, **devices}
        if devices:
            wiring["permittedHostDevices"] = devices
        return wiring


# The Packages whose component values ``_platform_values`` models (one branch each there): the chart model
# asks for every Package it renders, and every other answer is empty.
_COMPONENT_VALUES_OF = frozenset({
    "cozystack.networking", "cozystack.multus", "cozystack.linstor", "cozystack.cozystack-engine",
    "cozystack.tenant-application", "cozystack.monitoring-agents", "cozystack.backupstrategy-controller",
    "cozystack.kubevirt", "cozystack.ouroboros", GPU_OPERATOR})
# Answers that depend on the chart version alone (its catalogue is generated and read-only), asked by
# every cluster of a fleet again: computed once per chart model (issue 24).
_CHART_ANSWERS: "dict[tuple[int, tuple[str, str]], tuple[ChartModel, Any]]" = {}


def per_chart(chart: "ChartModel", question: tuple[str, str], answer: Callable[[], Any]) -> Any:
    key = (id(chart), question)
    found = _CHART_ANSWERS.get(key)
    if found is None or found[0] is not chart:
        found = (chart, answer())
        if len(_CHART_ANSWERS) > 4096:
            _CHART_ANSWERS.clear()
        _CHART_ANSWERS[key] = found
    return found[1]


_EVALUATIONS: "dict[tuple[str, str, str], tuple[dict[str, RenderedPackage], list[ChartProblem]]]" = {}
BUNDLES = ("system", "iaas", "paas", "naas")
# paas.yaml / naas.yaml variant guard (PLT-06); system.yaml has branches for exactly these.
SYSTEM_VARIANTS = ("isp-full", "isp-full-generic", "isp-hosted")
STAGE_CNI_TRUE = ("true", "yes", "on", "1")
STAGE_CNI_FALSE = ("false", "no", "off", "0")


def _as_list(value: Any) -> list[Any]:
    """`default (list) x` for a value iaas.yaml concatenates: a list as it is, an empty value as no
    items (other shapes fail the chart's concat, PLT-13's, and add nothing here)."""
    return list(value) if isinstance(value, list) else []


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


def helm_int(value: Any) -> int:
    """Sprig ``int``, i.e. spf13/cast ``ToInt`` (sprig v3.3 / cast v1.7, as helm 3.17 and 4 link):
    a bool is 1 or 0, a float is truncated, a string is ``strconv.ParseInt(trimZeroDecimal(s), 0, 0)``
    (base from the prefix: ``"010"`` is octal 8, ``"0x1f"`` 31; ``"4.0"`` is 4) and anything it cannot
    parse (``"4.5"``, ``" 10"``, maps, lists, null) is 0."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value == value and value not in (float("inf"), float("-inf")) else 0
    if isinstance(value, str):
        parsed = _go_parse_int(_trim_zero_decimal(value))
        return parsed if parsed is not None else 0
    return 0


def _trim_zero_decimal(text: str) -> str:
    """cast's trimZeroDecimal: "4.00" -> "4"; anything else unchanged."""
    found_zero = False
    for i in range(len(text), 0, -1):
        ch = text[i - 1]
        if ch == ".":
            if found_zero:
                return text[:i - 1]
        elif ch == "0":
            found_zero = True
        else:
            return text
    return text


_GO_BASES = {"0x": 16, "0X": 16, "0b": 2, "0B": 2, "0o": 8, "0O": 8}


def _go_parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64): sign, base prefix (a bare leading 0 is octal), underscores only
    between digits or after the prefix; None where Go returns an error (out of int64 range too)."""
    body, sign = text, 1
    if body[:1] in "+-" and body:
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    base = 10
    if body[:2] in _GO_BASES:
        base, digits = _GO_BASES[body[:2]], body[2:]
        prefixed = True
    elif len(body) > 1 and body[0] == "0":
        base, digits, prefixed = 8, body[1:], True
    else:
        digits, prefixed = body, False
    allowed = "0123456789abcdefABCDEF"[:base + (base - 10 if base > 10 else 0)] + "_"
    if not digits or any(ch not in allowed for ch in digits) or \
            ("_" in digits and not _underscores_ok(digits, prefixed)):
        return None
    try:
        number = sign * int(digits.replace("_", ""), base)
    except ValueError:
        return None
    return number if -(2 ** 63) <= number < 2 ** 63 else None


def _underscores_ok(digits: str, prefixed: bool) -> bool:
    if digits.startswith("_") and not prefixed:
        return False
    return not digits.endswith("_") and "__" not in digits


