"""PLT-*: rules on the platform Package and what its release renders (reference section (g), "Platform Package").

The platform chart's own ``fail`` guards are pre-empted with the chart's exact messages (PLT-03/04/05/06/10),
so a user who greps the HelmRelease condition finds the same text. Values are read as the chart sees
them: chart defaults, then the platform variant's values file, then the rendered Package values
(``renderer.platform.PlatformFacts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from renderer.errors import ERROR, WARNING, Finding
from renderer.model import CLUSTER_LABEL, MANAGED_BY, MANAGED_BY_LABEL, PACKAGE_API, PLATFORM_PACKAGE
from renderer.platform import ISP_FULL_VARIANTS, SYSTEM_VARIANTS, PlatformFacts, go_truthy, helm_string
from renderer.rules import Hit, RuleContext, rule
from renderer.rules.package import (
    _platform_list_hit,
    as_json,
    catalogue,
    co_managed,
    dotted,
    facts,
    hand_written,
    platform_package,
    spec_of,
    variant_hit_path,
    written_variant,
)

_MAIN = "C:cmd/cozystack-operator/main.go"
_IAAS = "C:packages/core/platform/templates/bundles/iaas.yaml"
_PAAS = "C:packages/core/platform/templates/bundles/paas.yaml"
_NAAS = "C:packages/core/platform/templates/bundles/naas.yaml"
_SYSTEM = "C:packages/core/platform/templates/bundles/system.yaml"
_HELPERS = "C:packages/core/platform/templates/_helpers.tpl"
_VALUES = ("spec", "components", "platform", "values")
KEEP_ANNOTATION = "helm.sh/resource-policy"
RELEASE_ANNOTATION = "meta.helm.sh/release-name"
PLATFORM_RELEASE = "cozystack-platform"


def _values_hit(ctx: RuleContext, message: str, *paths: tuple[str, ...], severity: str | None = None) -> Hit:
    """A hit at the first of ``paths`` (platform values paths) the rendered platform Package sets.

    A value nobody set in the overlay comes from the platform variant's values file, so the
    variant is what to point at then.
    """
    platform = platform_package(ctx)
    if platform is None:
        return Hit(message, overlay_path=("platform",), severity=severity)
    values = ((spec_of(platform).get("components") or {}).get("platform") or {}).get("values")
    for path in paths:
        node: Any = values
        for key in path:
            node = node.get(key, _MISSING) if isinstance(node, dict) else _MISSING
        if node is not _MISSING:
            return Hit(message, platform, _VALUES + path, severity=severity)
    return Hit(message, platform, variant_hit_path(platform), severity=severity)


_MISSING = object()


def go_quote(value: str) -> str:
    """Go's %q for a string (strconv.Quote), which the chart's printf uses."""
    escapes = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v",
               "\\": r"\\", '"': r"\""}
    out = []
    for ch in value:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


@rule(
    "PLT-01", ERROR,
    "The platform Package must be named cozystack.cozystack-platform",
    """
    The operator creates the platform PackageSource as `cozystack.` + `--platform-source-name`
    (default `cozystack-platform`), and a Package is resolved by the PackageSource of its own name. A
    Package carrying the platform's `platform` component under any other name resolves nothing.
    cozy-render always names the Package it renders from `platform:` correctly; this catches a
    hand-written copy in `packages:` or `manifests:`.
    """,
    [_MAIN + ' ("cozystack." + platformSourceName)', "W:install/cozystack/platform.md"],
)
def plt_01(ctx: RuleContext) -> Iterator[Hit]:
    platform_variants = set(catalogue(ctx)["platform"]["variants"]) - {"default"}
    for e in ctx.packages():
        if e.is_package(PLATFORM_PACKAGE):
            continue
        spec = spec_of(e)
        components = spec.get("components")
        variant = spec.get("variant")
        if (isinstance(components, dict) and "platform" in components) or \
                (isinstance(variant, str) and variant in platform_variants):
            yield Hit(f"The platform Package must be named {PLATFORM_PACKAGE} (found {e.name}).",
                      e, ("metadata", "name"))


@rule(
    "PLT-02", ERROR,
    "Unknown platform variant",
    """
    The platform PackageSource's variants are hard-coded in the operator: `default`, `isp-full`,
    `isp-full-generic`, `isp-hosted`. Anything else leaves the platform Package at VariantNotFound.
    The docs also name `distro-full`, which has no variant in the code.
    """,
    [_MAIN + " installPlatformPackageSource", "W:operations/configuration/platform-package.md (distro-full)"],
)
def plt_02(ctx: RuleContext) -> Iterator[Hit]:
    platform = platform_package(ctx)
    if platform is None:
        return
    variant = written_variant(platform)
    valid = catalogue(ctx)["platform"]["variants"]
    if variant is None or variant in valid:
        return
    docs = "; distro-full appears in the docs but the platform PackageSource has no such variant" \
        if variant == "distro-full" else ""
    yield Hit(f"Unknown platform variant {variant} (valid: {', '.join(valid)}){docs}.",
              platform, ("spec", "variant"))


@rule(
    "PLT-03", ERROR,
    'bundles.iaas.gpuOperatorVariant must be "default" or "vgpu"',
    """
    Whenever the iaas bundle renders, iaas.yaml validates `bundles.iaas.gpuOperatorVariant` (empty or
    null means `default`) up front, even when gpu-operator is not enabled, and fails the whole platform
    render otherwise. The message is the chart's, so it matches the HelmRelease condition. The value
    `container` is reported by GPU-03 (with a hint), so it is reported once.
    """,
    [_IAAS + " L41-43", "C:packages/core/platform/tests/bundles_gpu_kubevirt_wiring_test.yaml"],
    deferred_to=("GPU-03",),
)
def plt_03(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    if not f.iaas_valid:
        return
    value = f.get("bundles", "iaas", "gpuOperatorVariant")
    if not go_truthy(value) or value in ("default", "vgpu"):
        return
    if value == "container":
        return  # GPU-03's
    prefix = 'bundles.iaas.gpuOperatorVariant must be "default" or "vgpu", got '
    message = prefix + go_quote(value) if isinstance(value, str) else \
        f"{prefix}{as_json(value)} (not a string: the chart cannot even compare it)"
    yield _values_hit(ctx, message, ("bundles", "iaas", "gpuOperatorVariant"))


_IAAS_VARIANT_GUARD = \
    "bundles.iaas.enabled can only be true when bundles.system.variant is 'isp-full' or 'isp-full-generic'"


@rule(
    "PLT-04", ERROR,
    "bundles.iaas.enabled needs bundles.system.variant isp-full or isp-full-generic",
    """
    iaas.yaml's first guard: with `bundles.iaas.enabled` true the system variant must be `isp-full` or
    `isp-full-generic` (the iaas bundle needs the Cilium/KubeOVN data plane and storage those render),
    else the platform render fails with this exact message. On `isp-hosted` this is what a
    `bundles.iaas.enabled: true` (as in the vGPU docs example) leads to.
    """,
    [_IAAS + " L1-3"],
)
def plt_04(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    if go_truthy(f.get("bundles", "iaas", "enabled")) and f.system_variant not in ISP_FULL_VARIANTS:
        yield _values_hit(ctx, _IAAS_VARIANT_GUARD, ("bundles", "iaas", "enabled"), ("bundles", "system", "variant"))


# Exact prefixes of the chart's long messages (reference (g) PLT-05); the rest is ours.
_SYSTEM_REQUIRED = {
    "iaas": "bundles.iaas.enabled requires bundles.system.enabled: the iaas bundle depends on",
    "paas": "bundles.paas.enabled requires bundles.system.enabled: the paas catalog depends on",
    "naas": "bundles.naas.enabled requires bundles.system.enabled: the naas catalog depends on",
}


@rule(
    "PLT-05", ERROR,
    "iaas/paas/naas enabled while bundles.system.enabled is false",
    """
    `bundles.system.variant` keeps its value when `bundles.system.enabled` is false, so the variant
    guards pass on a configuration that skips the system bundle entirely; each of iaas.yaml, paas.yaml
    and naas.yaml therefore fails when its bundle is on without the system bundle, whose Packages it
    depends on. The chart messages are long; cozy-render prints their exact beginning (match it as a
    substring) and completes the sentence. Each file evaluates its variant guard (PLT-04 / PLT-06)
    first, so with an invalid system variant only that message is reported.
    """,
    [_IAAS + " L10", _PAAS + " L12", _NAAS + " L8"],
)
def plt_05(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    if go_truthy(f.get("bundles", "system", "enabled")):
        return
    for bundle, prefix in _SYSTEM_REQUIRED.items():
        if not go_truthy(f.get("bundles", bundle, "enabled")):
            continue
        allowed = ISP_FULL_VARIANTS if bundle == "iaas" else SYSTEM_VARIANTS
        if f.system_variant not in allowed:
            continue  # the variant guard fires first
        message = f"{prefix} the Packages the system bundle renders; enable the system bundle " \
                  f"(platform variant isp-full, isp-full-generic or isp-hosted) or set bundles.{bundle}.enabled: false"
        yield _values_hit(ctx, message, ("bundles", bundle, "enabled"), ("bundles", "system", "enabled"))


@rule(
    "PLT-06", ERROR,
    "paas/naas enabled with a system variant outside isp-full, isp-full-generic, isp-hosted",
    """
    paas.yaml and naas.yaml only accept the three system variants that have a branch in system.yaml
    and fail the platform render otherwise with these exact messages (`distro-full`, named in a values
    comment, has none).
    """,
    [_PAAS, _NAAS],
)
def plt_06(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    for bundle in ("paas", "naas"):
        if go_truthy(f.get("bundles", bundle, "enabled")) and f.system_variant not in SYSTEM_VARIANTS:
            message = f"bundles.{bundle}.enabled can only be true when bundles.system.variant is " \
                      "'isp-full', 'isp-full-generic', or 'isp-hosted'"
            yield _values_hit(ctx, message, ("bundles", bundle, "enabled"), ("bundles", "system", "variant"))


def _user_list(ctx: RuleContext, key: str) -> list[Any] | None:
    """bundles.<key> as the rendered platform Package sets it (None: the variant file's list applies)."""
    platform = platform_package(ctx)
    if platform is None:
        return None
    values = ((spec_of(platform).get("components") or {}).get("platform") or {}).get("values") or {}
    listed = (values.get("bundles") or {}).get(key) if isinstance(values.get("bundles"), dict) else None
    return listed if isinstance(listed, list) else None


_BOOTBOX = "cozystack.bootbox"
_BOOTBOX_APPLICATION = "cozystack.bootbox-application"


@rule(
    "PLT-07", WARNING,
    "A name in both enabledPackages and disabledPackages: disabled wins",
    """
    The optional helper renders a Package only when it is in `enabledPackages` and not in
    `disabledPackages`; iaas.yaml re-implements the same test for gpu-operator, so a name in both
    lists gets neither the Package nor the KubeVirt GPU wiring. Exception: the `cozystack.bootbox`
    gate in system.yaml reads only `enabledPackages` and emits `cozystack.bootbox-application` and
    `cozystack.bootbox` through the default helper, so with `cozystack.bootbox` in both lists
    `cozystack.bootbox-application` is still rendered unless it is disabled too.
    An entry that only the platform variant's values file ships is not reported.
    """,
    [_HELPERS + " (optional helper)", _IAAS + " ($gpuEnabled)", _SYSTEM + " (bootbox gate)",
     "C:packages/core/platform/tests (disabled wins)"],
)
def plt_07(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    enabled = _user_list(ctx, "enabledPackages")
    if enabled is None:
        return
    disabled = set(f.disabled_packages)
    seen: set[str] = set()
    for name in enabled:
        if not isinstance(name, str) or name not in disabled or name in seen:
            continue
        seen.add(name)
        if name == _BOOTBOX and _BOOTBOX_APPLICATION not in disabled:
            message = (f"{name} is both enabled and disabled: the bootbox gate ignores disabledPackages, so "
                       f"{_BOOTBOX_APPLICATION} is still rendered (only {name} is suppressed) unless it is "
                       "disabled too.")
        else:
            wiring = ", no KubeVirt GPU wiring" if name == "cozystack.gpu-operator" else ""
            message = f"{name} is both enabled and disabled; disabled wins (no Package{wiring})."
        yield _platform_list_hit(ctx, message, "enabledPackages", name)


@rule(
    "PLT-08", WARNING,
    "An enabledPackages entry that has no effect on this variant",
    """
    `bundles.enabledPackages` only switches on *optional* packages (full `cozystack.` names) of a bundle
    that renders: system's optional set and the `cozystack.bootbox` gate; iaas's
    `cozystack.vm-default-images`, `cozystack.hami` and `cozystack.gpu-operator` (isp-full and
    isp-full-generic only). Default packages such as `cozystack.metallb` ignore it (only
    `disabledPackages` affects them), and names no helper references are silently ignored. The
    `cozystack.backupstrategy-controller` entry that values-isp-full-generic.yaml itself ships is inert
    but not the user's doing, so it is not reported.
    """,
    [_HELPERS, "C:packages/core/platform/templates/bundles/*.yaml", "W:operations/configuration/components.md"],
)
def plt_08(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    enabled = _user_list(ctx, "enabledPackages")
    if enabled is None:
        return
    platform = catalogue(ctx)["platform"]
    shipped = ((platform["variantValues"].get(f.variant) or {}).get("bundles") or {}).get("enabledPackages") or []
    optional = {name: bundle for bundle in ("system", "iaas", "paas", "naas") for name in f.optional_packages(bundle)}
    defaults = {name for bundle in ("system", "iaas", "paas", "naas") for name in f.default_packages(bundle)}
    seen: set[Any] = set()
    for name in enabled:
        if not isinstance(name, (str, int, float, bool)) or name in seen or name in shipped:
            continue
        seen.add(name)
        if isinstance(name, str) and name in optional:
            bundle = optional[name]
            if f.bundle_renders(bundle):
                continue
            why = f"it is optional in the {bundle} bundle, which does not render here"
        elif isinstance(name, str) and name in defaults:
            why = "it is a default package: only disabledPackages affects it"
        elif not isinstance(name, str) or not name.startswith("cozystack."):
            why = "optional packages are listed by their full cozystack. name"
        else:
            why = "no platform bundle references this name"
        yield _platform_list_hit(ctx, f"{name} in enabledPackages has no effect on this variant ({why}).",
                                 "enabledPackages", name)


@rule(
    "PLT-09", WARNING,
    "A Package no longer rendered stays installed (resource-policy keep)",
    """
    Every Package the platform renders carries `helm.sh/resource-policy: keep`, so dropping it from the
    render (adding it to `disabledPackages` later, flipping a flag) leaves the live Package, and its
    HelmReleases, in place; uninstalling means deleting the Package CR. This needs the live cluster:
    the offline check (`check`, `render`) never reports it; `orphaned_packages(rendered, live)` in
    `renderer.rules.platform` is what the diff command calls with the live Packages.
    """,
    [_HELPERS + " (keep annotation)", "C:packages/core/platform/values.yaml (proxyProtocol notes)",
     "W:operations/configuration/components.md"],
)
def plt_09(ctx: RuleContext) -> Iterator[Hit]:
    return iter(())  # live state only: see orphaned_packages


def orphaned_packages(rendered: Iterable[Any], live: Iterable[dict[str, Any]],
                      catalogue_data: dict[str, Any] | None = None) -> list[Finding]:
    """PLT-09 against the live cluster: live Packages with resource-policy keep that nothing renders any more.

    ``rendered`` holds the render's objects (``Emitted`` or plain dicts); the platform release's own
    Packages are predicted from the rendered platform Package. A live Package counts as ours to judge
    only if it carries this render's cluster label, or the platform release installed it
    (``meta.helm.sh/release-name: cozystack-platform``) under a name the catalogue knows the platform
    renders: the catalogue does not list every platform Package, and an unknown one is not guessed at.
    """
    objects = [getattr(o, "obj", o) for o in rendered]
    if catalogue_data is None:
        from renderer.variants import Variants

        catalogue_data = Variants().catalogue()
    facts_ = PlatformFacts.from_objects(catalogue_data, [_AsEmitted(o) for o in objects])
    rendered_names = {_name(o) for o in objects if _is_package(o)} | set(facts_.rendered_packages)
    clusters = {((o.get("metadata") or {}).get("labels") or {}).get(CLUSTER_LABEL) for o in objects} - {None}
    platform_names = facts_.known_platform_names()
    findings = []
    for obj in live:
        if not _is_package(obj):
            continue
        meta = obj.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        labels = meta.get("labels") or {}
        name = _name(obj)
        if annotations.get(KEEP_ANNOTATION) != "keep" or name in rendered_names:
            continue
        ours = labels.get(MANAGED_BY_LABEL) == MANAGED_BY and labels.get(CLUSTER_LABEL) in clusters
        platforms = annotations.get(RELEASE_ANNOTATION) == PLATFORM_RELEASE and name in platform_names
        if ours or platforms:
            findings.append(Finding("PLT-09", f"{name} is no longer rendered but stays installed "
                                    "(resource-policy keep); delete the Package CR to uninstall.", None, WARNING))
    return sorted(findings, key=lambda f: f.message)


class _AsEmitted:
    """Just enough of ``Emitted`` for ``PlatformFacts.from_objects`` over plain dicts."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj

    def is_package(self, name: str | None = None) -> bool:
        return _is_package(self.obj) and (name is None or _name(self.obj) == name)


def _is_package(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("apiVersion") == PACKAGE_API and obj.get("kind") == "Package"


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


_STAGE_CNI_MESSAGE = \
    "networking.stageCniPlugins: expected a boolean, got {} -- leaving it unset follows the bundle variant"


@rule(
    "PLT-10", ERROR,
    "networking.stageCniPlugins is not a readable boolean",
    """
    `_helpers.tpl` reads `networking.stageCniPlugins` case-insensitively as true/yes/on/1 or
    false/no/off/0 (null or absent follows the variant: on for both isp-full variants) and fails the
    whole platform render on anything else, with this exact message. It is only read where the system
    bundle renders with `isp-full` or `isp-full-generic`; elsewhere a bad value is a warning, because it
    is ignored. Set it only on the platform Package: edits to `cozystack.multus` are reverted.
    """,
    [_HELPERS + " cozystack.platform.stageCniPlugins",
     "C:packages/core/platform/tests/bundles_multus_staging_test.yaml"],
)
def plt_10(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    _, readable = f.stage_cni_plugins()
    if readable:
        return
    value = f.get("networking", "stageCniPlugins")
    message = _STAGE_CNI_MESSAGE.format(go_quote(helm_string(value)))
    path = ("networking", "stageCniPlugins")
    if go_truthy(f.get("bundles", "system", "enabled")) and f.system_variant in ISP_FULL_VARIANTS:
        yield _values_hit(ctx, message, path)
    else:
        yield _values_hit(ctx, f"networking.stageCniPlugins is ignored on this configuration (read only when the "
                               f"system bundle renders isp-full or isp-full-generic); the chart would reject "
                               f"{go_quote(helm_string(value))}.", path, severity=WARNING)


@rule(
    "PLT-11", ERROR,
    "A hand-written Package the platform release also renders",
    """
    The platform release renders many child Packages itself (`cozystack.networking`,
    `cozystack.metallb`, `cozystack.kubevirt`, ...). A hand-written Package of the same name, not opted
    out with `bundles.disabledPackages`, is the same cluster-scoped object managed from two places:

    - **error** when it sets a key the platform renders for that Package (reference (b): multus
      `stageCniPlugins`, networking cilium/kubeovn keys, linstor `talos.enabled`, engine node selector
      and telemetry, tenant `oidc-enabled`, monitoring-agents `global.target`, `backupStorage`,
      kubevirt `cpuAllocationRatio`) to a different value: the platform re-asserts its value on every
      upgrade. Variant conflicts are PLT-12's. Keys whose platform value needs cluster state (the
      isp-full-generic API endpoint and CIDRs read from a ConfigMap) are not compared.
    - **warning** otherwise: a co-managed overlay that only adds keys is the documented way to tune a
      child Package (metallb values, `cilium.hubble`, manual KubeVirt GPU wiring), but the platform
      still owns what it renders.

    The other error case, creating such a Package before the platform release has (Helm then refuses to
    adopt it and the whole platform release fails), depends on the live cluster: the offline check
    cannot see it; `unadopted_packages(result, live)` in `renderer.rules.platform` decides it for diff.
    Packages a feature renders (Hubble, GPU) follow their own rules unless `packages:` also names them.
    """,
    [_SYSTEM, _IAAS, _PAAS, _NAAS, "C:packages/core/platform/values.yaml (multus: reverted by the platform)",
     "W:operations/configuration/components.md", "W:networking/architecture.md"],
)
def plt_11(ctx: RuleContext) -> Iterator[Hit]:
    for e in hand_written(ctx):
        rendered = co_managed(ctx, e)
        if rendered is None:
            continue
        components = spec_of(e).get("components")
        conflicts = 0
        for path, platform_value in sorted(rendered.values.items()):
            ours = _walk(components, path)
            if ours is _MISSING or _same(ours, platform_value):
                continue
            conflicts += 1
            key = dotted(("spec", "components") + path)
            yield Hit(f"{e.name} is rendered by the platform release with {key}={as_json(platform_value)}; keep the "
                      "platform's value or opt the Package out (bundles.disabledPackages) before managing it alone.",
                      e, ("spec", "components") + path, severity=ERROR)
        variant = written_variant(e)
        if conflicts or (variant is not None and variant != rendered.variant):
            continue  # the errors say more than the co-management note
        yield Hit(f"{e.name} is co-managed with the platform release; platform-rendered keys will be re-asserted "
                  "on every platform upgrade.", e, (), severity=WARNING)


def unadopted_packages(result: Any, live: Iterable[dict[str, Any]]) -> list[Finding]:
    """PLT-11 case (b) against the live cluster: a hand-written Package the platform also renders
    that would be *created* by syncing our render, because the live cluster has no copy installed by
    the platform release. Helm then refuses to adopt the object and the whole platform release fails.
    """
    ctx = RuleContext(result)
    installed = {_name(o) for o in live if _is_package(o)
                 and ((o.get("metadata") or {}).get("annotations") or {}).get(RELEASE_ANNOTATION) == PLATFORM_RELEASE}
    findings = []
    for e in hand_written(ctx):
        if co_managed(ctx, e) is not None and e.name not in installed:
            findings.append(Finding(
                "PLT-11", f"{e.name} does not exist yet with platform release metadata "
                f"({RELEASE_ANNOTATION}: {PLATFORM_RELEASE}); creating it first makes Helm refuse to adopt it and "
                "the platform release fails. Sync it after the platform Package is Ready.",
                e.locate((), result.overlay), ERROR))
    return findings


def _walk(tree: Any, path: tuple[Any, ...]) -> Any:
    node = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return _MISSING
        node = node[key]
    return node


def _same(a: Any, b: Any) -> bool:
    # true == 1 in Python but not in YAML/Helm: a type change is a different value.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, str) != isinstance(b, str):
        return False
    return a == b


@rule(
    "PLT-12", ERROR,
    "A hand-written child Package's variant conflicts with the platform-rendered one",
    """
    For a child Package the platform release renders (and that is not in `disabledPackages`), the
    platform decides the variant: `cozystack.networking` follows `bundles.system.variant`
    (`kubeovn-cilium`, `kubeovn-cilium-generic`, `noop`); `cozystack.cozystack-scheduler` is `linstor` on
    isp-full* and `default` on isp-hosted; `cozystack.cozystack-engine` and
    `cozystack.monitoring-application` are `oidc` with OIDC on; `cozystack.kubevirt` is `default`; the six
    iaas `*-application` Packages are `kubevirt`; a bundle-enabled `cozystack.gpu-operator` follows
    `bundles.iaas.gpuOperatorVariant`; everything else is `default`. A different variant in a
    hand-written copy fights the platform release on every reconcile. To run another variant, add the
    name to `bundles.disabledPackages` and own the whole Package.
    """,
    [_SYSTEM, _IAAS, _PAAS, _NAAS],
)
def plt_12(ctx: RuleContext) -> Iterator[Hit]:
    for e in hand_written(ctx):
        rendered = co_managed(ctx, e)
        variant = written_variant(e)
        if rendered is None or variant is None or variant == rendered.variant:
            continue
        yield Hit(f"Variant {variant} conflicts with the platform-rendered variant {rendered.variant} for {e.name}.",
                  e, ("spec", "variant"))
