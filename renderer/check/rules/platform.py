"""PLT-*: rules on the platform Package and what its release renders (reference section (g), "Platform Package").

The platform chart's own ``fail`` guards are pre-empted with the chart's exact messages (PLT-03/04/05/06/10),
so a user who greps the HelmRelease condition finds the same text. Values are read as the chart sees
them: chart defaults, then the platform variant's values file, then the rendered Package values
(``renderer.resolve.platform.PlatformFacts``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from renderer.check.rules import Hit, RuleContext, rule
from renderer.check.rules.common import (
    as_json,
    catalogue,
    co_managed,
    dotted,
    facts,
    hand_written,
    platform_list_hit,
    platform_package,
    spec_of,
    variant_hit_path,
    written_variant,
)
from renderer.errors import ERROR, WARNING
from renderer.model import GPU_OPERATOR, PACKAGE_API, PLATFORM_PACKAGE
from renderer.platform_chart.model import go_quote, go_type
from renderer.resolve.platform import ISP_FULL_VARIANTS, SYSTEM_VARIANTS, go_format, go_truthy
from renderer.tree import dig

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
        if dig(values, *path, default=_MISSING) is not _MISSING:
            return Hit(message, platform, _VALUES + path, severity=severity)
    return Hit(message, platform, variant_hit_path(platform), severity=severity)


_MISSING = object()


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
    if not isinstance(value, str):
        return  # eq fails before the guard can print: PLT-13 quotes that Go template error
    prefix = 'bundles.iaas.gpuOperatorVariant must be "default" or "vgpu", got '
    yield _values_hit(ctx, prefix + go_quote(value), ("bundles", "iaas", "gpuOperatorVariant"))


_IAAS_VARIANT_GUARD = \
    "bundles.iaas.enabled can only be true when bundles.system.variant is 'isp-full' or 'isp-full-generic'"


def _chart_prints(f: Any, message: str) -> bool:
    """Whether the chart, run in helm's order on these values, reaches this `fail` guard (a Go
    template error earlier in the file, e.g. `eq` on a numeric system variant, stops it first:
    then PLT-13 quotes that error and no guard text is claimed)."""
    return any(p.kind == "fail" and p.message.startswith(message) for p in f.chart_problems)


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
    if go_truthy(f.get("bundles", "iaas", "enabled")) and f.system_variant not in ISP_FULL_VARIANTS and \
            _chart_prints(f, _IAAS_VARIANT_GUARD):
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
    depends on. The message is the chart's own, whole, read from the generated catalogue of the
    cluster's chart version (v1.6.2 has no such guard for iaas, so there it does not fire). Each file
    evaluates its variant guard (PLT-04 / PLT-06) first, so with an invalid system variant only that
    message is reported.
    """,
    [_IAAS + " L10", _PAAS + " L12", _NAAS + " L8"],
)
def plt_05(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    if go_truthy(f.get("bundles", "system", "enabled")):
        return
    guards = [g["message"] for g in f.chart.data["guards"]]
    for bundle, prefix in _SYSTEM_REQUIRED.items():
        if not go_truthy(f.get("bundles", bundle, "enabled")):
            continue
        if not any(prefix in message for message in guards):
            continue  # this chart version has no such guard (v1.6.2 iaas)
        allowed = ISP_FULL_VARIANTS if bundle == "iaas" else SYSTEM_VARIANTS
        if f.system_variant not in allowed:
            continue  # the variant guard fires first
        # The chart's whole message, from the generated catalogue of this version (exact, so the check
        # against the real chart reports it once).
        message = next((m for m in guards if prefix in m), prefix)
        message = json.loads(message) if message.startswith('"') else message
        if not _chart_prints(f, prefix):
            continue
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
            if not _chart_prints(f, message):
                continue
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
            wiring = ", no KubeVirt GPU wiring" if name == GPU_OPERATOR else ""
            message = f"{name} is both enabled and disabled; disabled wins (no Package{wiring})."
        yield platform_list_hit(ctx, message, "enabledPackages", name)


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
    but not the user's doing, so it is not reported. An entry that is not a string (a number, a bool,
    a list, a map) does not fail the chart: Sprig `has` compares values of the entry's own type, so it
    never matches a Package name and the entry has no effect.
    """,
    [_HELPERS, "C:packages/core/platform/templates/bundles/*.yaml", "W:operations/configuration/components.md"],
)
def plt_08(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    enabled = _user_list(ctx, "enabledPackages")
    if enabled is None:
        return
    shipped = ((f.chart.data["variantValues"].get(f.variant) or {}).get("bundles") or {}).get("enabledPackages") or []
    optional = {name: bundle for bundle in ("system", "iaas", "paas", "naas") for name in f.optional_packages(bundle)}
    defaults = {name for bundle in ("system", "iaas", "paas", "naas") for name in f.default_packages(bundle)}
    seen: set[Any] = set()
    others = 0
    for name in enabled:
        if not isinstance(name, str):
            others += 1
            # The chart renders: `has $name (default (list) .Values.bundles.enabledPackages)` compares
            # with the entry's own type, so a number, bool, list or map never matches a Package name.
            yield Hit(f"{_shown_entry(name)} in enabledPackages has no effect: the chart's `has` compares it with "
                      f"Package names as a {go_type(name)}, which never matches; write the full cozystack. name "
                      "as a string.", **_other_entry_at(ctx, "enabledPackages", others))
            continue
        if name in seen or name in shipped:
            continue
        seen.add(name)
        if name in optional:
            bundle = optional[name]
            if f.bundle_renders(bundle):
                continue
            why = f"it is optional in the {bundle} bundle, which does not render here"
        elif name in defaults:
            why = "it is a default package: only disabledPackages affects it"
        elif not name.startswith("cozystack."):
            why = "optional packages are listed by their full cozystack. name"
        else:
            why = "no platform bundle references this name"
        yield platform_list_hit(ctx, f"{name} in enabledPackages has no effect on this variant ({why}).",
                                 "enabledPackages", name)


def _shown_entry(entry: Any) -> str:
    return go_quote(go_format(entry)) if isinstance(entry, (list, dict)) else go_format(entry)


def _other_entry_at(ctx: RuleContext, key: str, nth: int) -> dict[str, Any]:
    """Where the overlay wrote its ``nth`` (from 1) non-string bundles.<key> entry (features only add
    strings, so the non-string entries of the rendered list are the overlay's, in its order)."""
    listed = ctx.overlay.get("platform", "values", "bundles", key)
    count = 0
    for i, entry in enumerate(listed if isinstance(listed, list) else []):
        if not isinstance(entry, str):
            count += 1
            if count == nth:
                return {"overlay_path": ("platform", "values", "bundles", key, i)}
    platform = platform_package(ctx)
    if platform is not None:
        return {"emitted": platform, "obj_path": ("spec", "components", "platform", "values", "bundles", key)}
    return {"overlay_path": ("platform",)}


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
    [_HELPERS + " cozystack.platform.stageCniPlugins (main only; v1.6.2 does not read it)",
     "C:packages/core/platform/tests/bundles_multus_staging_test.yaml"],
)
def plt_10(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    if not f.reads("networking.stageCniPlugins"):
        return  # a main-only key: v1.6.2 never reads it (nor renders cozystack.multus)
    _, readable = f.stage_cni_plugins()
    if readable:
        return
    value = f.get("networking", "stageCniPlugins")
    message = _STAGE_CNI_MESSAGE.format(go_quote(go_format(value)))
    path = ("networking", "stageCniPlugins")
    if go_truthy(f.get("bundles", "system", "enabled")) and f.system_variant in ISP_FULL_VARIANTS:
        yield _values_hit(ctx, message, path)
    else:
        yield _values_hit(ctx, f"networking.stageCniPlugins is ignored on this configuration (read only when the "
                               f"system bundle renders isp-full or isp-full-generic); the chart would reject "
                               f"{go_quote(go_format(value))}.", path, severity=WARNING)


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
      kubevirt `cpuAllocationRatio`, and on the bundle GPU route the kubevirt wiring
      (`extraFeatureGates`, `permittedHostDevices` with the passthrough or vGPU mdev defaults,
      `mediatedDevicesConfiguration`) and, on vgpu, gpu-operator's forwarded `vgpuManager` and
      `vgpuDeviceManager.enabled`) to a different value: the platform re-asserts its value on every
      upgrade. Variant conflicts are PLT-12's. Keys whose platform value needs cluster state (the
      isp-full-generic API endpoint and CIDRs read from a ConfigMap) are not compared.
    - **warning** otherwise: a co-managed overlay that only adds keys is the documented way to tune a
      child Package (metallb values, `cilium.hubble`, manual KubeVirt GPU wiring), but the platform
      still owns what it renders. A `manifests:` Package of such a name is no patch: it is emitted as a
      plain object (no `render.cozystack.io/ownership: patch`, so the GitOps tool prunes and deletes
      it as its own), and the warning calls it contested, as `effective` labels it.

    Creating such a Package before the platform release has does not fail the release: the bundled
    helm-controller v1.5.0 sets Helm's TakeOwnership (`install`/`upgrade.disableTakeOwnership` default
    false), so Helm adopts the existing object. Until it does, the operator reconciles what the patch
    created: it carries no `spec.variant`, so it resolves to variant `default`, which
    `cozystack.networking`'s PackageSource does not have (Ready=False VariantNotFound), and for a
    Package whose source has `default` while the platform renders another variant, the wrong variant
    is installed meanwhile. That depends on the live cluster, so the offline check cannot see it;
    `cozy-render diff` reports a patch whose live Package is absent as PLT-11. Keep patch
    objects after the platform Package (a later sync wave). Packages a feature renders (Hubble, GPU)
    follow their own rules unless `packages:` also names them.
    """,
    [_SYSTEM, _IAAS, _PAAS, _NAAS, "C:packages/core/platform/values.yaml (multus: reverted by the platform)",
     "W:operations/configuration/components.md", "W:networking/architecture.md",
     "fluxcd/helm-controller v1.5.0 internal/action/{install,upgrade}.go (TakeOwnership = !disableTakeOwnership)",
     "helm/helm v4.1.1 pkg/action/{install,upgrade}.go (requireAdoption when TakeOwnership)"],
)
def plt_11(ctx: RuleContext) -> Iterator[Hit]:
    # The one body: ctx.platform is the model's or helm's rendering (renderer.effective.chart_check).
    not_compared = ctx.platform.not_compared
    for e in hand_written(ctx):
        rendered = co_managed(ctx, e)
        if rendered is None:
            continue
        components = spec_of(e).get("components")
        conflicts = 0
        for path, platform_value in sorted(rendered.values.items()):
            ours = dig(components, *path, default=_MISSING)
            if ours is _MISSING or _same(ours, platform_value) or (e.name, str(path[-1])) in not_compared:
                continue
            conflicts += 1
            key = dotted(("spec", "components") + path)
            yield Hit(f"{e.name} is rendered by the platform release with {key}={as_json(platform_value)}; keep the "
                      "platform's value or opt the Package out (bundles.disabledPackages) before managing it alone.",
                      e, ("spec", "components") + path, severity=ERROR)
        variant = written_variant(e)
        if conflicts or (variant is not None and variant != rendered.variant):
            continue  # the errors say more than the co-management note
        if not _is_patch(e.obj):
            # A manifests: Package is emitted whole, no patch ownership: the GitOps tool syncs, prunes and
            # deletes it as its own while the platform release writes the same object (effective: contested).
            yield Hit(f"{e.name} is contested with the platform release: this render emits it as a plain object "
                      "(manifests:, synced, pruned and deleted as cozy-render's own) and the platform release "
                      "renders it too; tune it under packages: (a patch) or opt it out (bundles.disabledPackages) "
                      "to own it.", e, (), severity=WARNING)
            continue
        yield Hit(f"{e.name} is co-managed with the platform release; platform-rendered keys will be re-asserted "
                  "on every platform upgrade.", e, (), severity=WARNING)


def _is_patch(obj: dict[str, Any]) -> bool:
    from renderer.model import OWNERSHIP_ANNOTATION

    annotations = (obj.get("metadata") or {}).get("annotations") if isinstance(obj.get("metadata"), dict) else None
    return isinstance(annotations, dict) and annotations.get(OWNERSHIP_ANNOTATION) == "patch"


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
    name to `bundles.disabledPackages` and own the whole Package. An empty `variant: ""` is a
    variant too: server-side apply writes it over the platform's, and the controller reads an empty
    variant as `default` (for `cozystack.networking`: VariantNotFound).
    """,
    [_SYSTEM, _IAAS, _PAAS, _NAAS],
)
def plt_12(ctx: RuleContext) -> Iterator[Hit]:
    for e in hand_written(ctx):
        rendered = co_managed(ctx, e)
        if rendered is not None and spec_of(e).get("variant") == "":
            # Not "unset": server-side apply writes the empty string over the platform's variant,
            # and the controller resolves "" to default (package_reconciler.go).
            yield Hit(f'spec.variant "" overrides the platform-rendered variant {rendered.variant} for {e.name}: '
                      "server-side apply sets it, and the controller resolves an empty variant to default; "
                      "drop the key to keep the platform's.", e, ("spec", "variant"))
            continue
        variant = written_variant(e)
        if rendered is None or variant is None or variant == rendered.variant:
            continue
        yield Hit(f"Variant {variant} conflicts with the platform-rendered variant {rendered.variant} for {e.name}.",
                  e, ("spec", "variant"))


@rule(
    "PLT-13", ERROR,
    "A platform value the chart's templates cannot evaluate",
    """
    The platform chart reads its values with Go template semantics, and some values that pass the
    overlay schema make a template itself fail, which fails the whole platform release: a field walk
    through a non-map (`authentication: {oidc: false}`), a `ternary` on a non-bool
    (`authentication.oidc.enabled: "true"`), `dig` through a bool (`networking: {encryption: true}`,
    main only), `eq` across kinds (a list or number as `bundles.iaas.gpuOperatorVariant`), and Sprig
    `urlParse` on an endpoint without a scheme (`publishing.apiServerEndpoint: 10.0.0.5:6443`, read on
    isp-full-generic), and iaas.yaml's GPU wiring on the bundle GPU route (a map or string where it
    concatenates a list, `Cannot concat type map as list`; a list where it expects a map, `wrong type
    for value; expected map[string]interface {}`; a non-string `gpu.vgpuManager.image`, `incompatible
    types for comparison`; a bool where it reads a field, `can't evaluate field enabled in type
    bool`). The conditions are replayed from the chart version's own templates
    (`renderer/_generated/platform/<version>.json`), in the order helm executes them, so the message
    is the one helm prints after `executing "<template>"`. `fail` guards are PLT-03..06 and PLT-10's.

    Also the templates that run only in a cluster, which no offline render of the bundles reaches:
    `apps.yaml` (`eq` on a non-string `publishing.certificates.solver`) and
    `containerd-registry-secret.yaml` (`registries.mirrors` entries that are not maps, `endpoints`
    that are not lists, mirrors with endpoints but no `registries.config` map: `index of untyped
    nil`, config entries of the wrong shape). The other value paths of those templates, and the
    templates not replayed at all, are reported as not checked without helm (PLT-18).
    One cause failing several templates (a map as `bundles.disabledPackages`) is one finding.
    """,
    [_SYSTEM, _IAAS, _HELPERS, "C:packages/core/platform/templates/apps.yaml L52",
     "C:packages/core/platform/templates/containerd-registry-secret.yaml",
     "renderer/_generated/platform/<version>.json (generated from the chart)"],
)
def plt_13(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    seen: set[str] = set()
    for problem in f.chart_problems:
        if problem.kind != "template" or problem.message in seen:
            continue  # one cause failing several templates (a map as disabledPackages): helm stops at the first
        seen.add(problem.message)
        message = f"executing \"cozy-platform/{problem.template}\" {problem.message} (platform chart {f.chart.version})"
        yield _values_hit(ctx, message, *_prefixes(problem.key))


def _prefixes(key: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``key`` and its parents, longest first: the deepest value the overlay actually set."""
    return [key[:n] for n in range(len(key), 0, -1)]


@rule(
    "PLT-14", WARNING,
    "A platform value the cluster's chart version does not read",
    """
    The vendored chart versions read different platform values: main reads `networking.encryption`
    (KubeOVN IPsec), `networking.stageCniPlugins` (multus staging), `telemetry.disabled` (the
    controller's telemetry opt-out) and `gateway.http2` (Cilium ALPN), and v1.6.2 reads none of them.
    A key the cluster's version never reads while another vendored version does is silently ignored
    by the chart: this warns, naming the version that reads it (set `platform.version`, or drop the
    key). The value paths each version reads are generated from all of its templates
    (`renderer/_generated/platform/<version>.json`, `reads`). Keys no vendored version reads are not
    this rule's (the overlay schema and the other rules judge them).
    """,
    [_SYSTEM, _HELPERS, "renderer/_generated/platform/<version>.json (reads)"],
)
def plt_14(ctx: RuleContext) -> Iterator[Hit]:
    from renderer.platform_chart import shipped_versions
    from renderer.platform_chart.model import chart_model

    f = facts(ctx)
    others = [chart_model(v) for v in shipped_versions() if v != f.chart.version]
    platform = platform_package(ctx)
    values = ((spec_of(platform).get("components") or {}).get("platform") or {}).get("values") \
        if platform is not None else None

    # A module-level walk, not a nested one: a nested function that recurses holds itself through its
    # closure, a cycle only the garbage collector frees (issue 24).
    yield from _unread_values(ctx, f, others, values, ())


def _unread_values(ctx: RuleContext, f: Any, others: list[Any], node: Any, path: tuple[str, ...]) -> Iterator[Hit]:
    if not isinstance(node, dict):
        return
    for key in sorted(node, key=str):
        here = path + (str(key),)
        dotted_path = ".".join(here)
        if f.reads(dotted_path):
            yield from _unread_values(ctx, f, others, node[key], here)
            continue
        readers = [m.version for m in others if m.reads(dotted_path)]
        if readers and isinstance(node[key], dict) and node[key]:
            yield from _unread_values(ctx, f, others, node[key], here)  # name the leaves the other version reads
        elif readers:
            yield _values_hit(ctx, f"{dotted_path} is not read by the platform chart {f.chart.version} "
                                   f"(read by {', '.join(readers)}): it has no effect on this cluster; set "
                                   "platform.version to a version that reads it, or drop the key.", here)


@rule(
    "PLT-15", ERROR,
    "A patch of a Package the cluster's chart version does not render",
    """
    A `packages:` entry without `spec.variant` tunes a Package the platform release renders (a patch,
    see PLT-11). Some child Packages exist only in some chart versions (main renders
    `cozystack.kubernetes-nodes-application` and `cozystack.computeplane-application`, v1.6.2 does
    not). On a version that does not render it, the entry is no patch: it creates the Package itself,
    with no variant, so the controller resolves it to `default` (VariantNotFound where the source has
    no such variant, PackageSourceNotFound where the version ships no source) and nothing the
    platform would have set is there. Set `platform.version` to a version that renders it, or write
    the whole Package (with its variant) and own it.
    """,
    [_SYSTEM, _IAAS, _PAAS, _NAAS, "C:internal/operator/package_reconciler.go (variant default)"],
)
def plt_15(ctx: RuleContext) -> Iterator[Hit]:
    from renderer.platform_chart import shipped_versions
    from renderer.platform_chart.model import chart_model

    f = facts(ctx)
    own = f.known_platform_names()
    for e in hand_written(ctx):
        if e.name in own or written_variant(e) is not None:
            continue
        renderers = [v for v in shipped_versions() if v != f.chart.version and e.name in chart_model(v).emits]
        if renderers:
            yield Hit(f"{e.name} is rendered by the platform chart {', '.join(renderers)} but not by "
                      f"{f.chart.version}: this entry is no patch, it creates the Package with no spec.variant "
                      "(variant default); set platform.version, or write the whole Package with its variant.",
                      e, ("metadata", "name"))


@rule(
    "PLT-16", ERROR,
    "A PackageSource the platform chart also ships",
    """
    The platform release emits every PackageSource under its chart's `sources/` (templates/sources.yaml
    copies them verbatim): `cozystack.metallb`, `cozystack.networking`, ... A PackageSource of the same
    name in the render (`manifests:`) is one cluster-scoped object with two owners: the platform
    release re-asserts its copy on every reconcile and Helm adopts or overwrites the other, so whichever
    applied last decides the variants every Package of that name resolves against. The names are the
    cluster's chart version's (`renderer/_generated/platform/<version>.json`, `sources`). Ship a source
    of your own under a name of your own.
    """,
    ["C:packages/core/platform/templates/sources.yaml", "C:packages/core/platform/sources/*.yaml"],
)
def plt_16(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    for e in ctx.objects:
        if e.api_version == PACKAGE_API and e.kind == "PackageSource" and e.name in f.chart.sources:
            yield Hit(f"PackageSource {e.name} is shipped by the platform chart {f.chart.version} "
                      f"({f.chart.sources[e.name]['file']}): the platform release re-applies its own copy, so "
                      "two owners fight over it; name your source differently.", e, ("metadata", "name"))


# Platform values the chart tests with Go template truthiness (`if .Values.x`, `dig ... false`): what a
# true reading does. The gpu.* switches are GPU-13/GPU-14's.
_READ_AS_TRUE = (
    (("networking", "encryption", "enabled"), "KubeOVN IPsec is turned on (kube-ovn func.ENABLE_OVN_IPSEC: true)"),
    (("telemetry", "disabled"), "cozystack-controller telemetry is disabled"),
    (("bundles", "system", "enabled"), "the system bundle renders"),
    (("bundles", "iaas", "enabled"), "the iaas bundle renders"),
    (("bundles", "paas", "enabled"), "the paas bundle renders"),
    (("bundles", "naas", "enabled"), "the naas bundle renders"),
)
_FALSE_SPELLINGS = ("false", "no", "off", "0", "n", "f")


@rule(
    "PLT-17", WARNING,
    "A platform value spelled false that the chart reads as true",
    """
    The platform chart tests these values with Go template truthiness (`if .Values.telemetry.disabled`,
    `dig "encryption" "enabled" false .Values.networking`): every non-empty string is true, so a quoted
    "false" (or "no", "off", "0") turns the switch ON without a word: `networking.encryption.enabled:
    "false"` enables KubeOVN IPsec on main, `bundles.paas.enabled: "false"` renders the paas bundle.
    The render path models the value as the chart reads it (true); this warning says so. Write the
    YAML boolean false (unquoted), or leave the key out. Only keys the cluster's chart version reads
    are judged (v1.6.2 does not read networking.encryption).
    """,
    [_SYSTEM, _IAAS, _PAAS, _NAAS, "https://pkg.go.dev/text/template (Actions, if: the empty values are false, "
     "0, nil and zero-length strings, arrays, slices and maps; every other value is true)"],
)
def plt_17(ctx: RuleContext) -> Iterator[Hit]:
    f = facts(ctx)
    for path, effect in _READ_AS_TRUE:
        value = f.chart_get(*path)
        if not isinstance(value, str) or value.strip().lower() not in _FALSE_SPELLINGS or \
                not f.reads(".".join(path)):
            continue
        yield _values_hit(ctx, f"{'.'.join(path)}: {go_quote(value)} is a string, which the platform chart "
                               f"{f.chart.version} reads as true: {effect}; write {path[-1]}: false (unquoted) "
                               "to turn it off.", path)


_KIND_NAMES = {"string": "a string", "bool": "a boolean", "float64": "a number", "slice": "a list", "map": "a map",
               "invalid": "null"}


@rule(
    "PLT-18", WARNING,
    "A platform value of another type than the chart's, in a template the render path does not replay",
    """
    Without helm the render path replays the chart's bundle templates and helpers with their type
    checks (PLT-13 quotes helm's own error), and of the templates that run only in a cluster the
    value paths PLT-13 names. The other templates (`apps.yaml`: certificates, DNS-01, publishing,
    OIDC, resources; `scheduling.yaml`; `migration-hook.yaml`; `repository.yaml` `sourceRef`;
    `cozystack-version.yaml`) are not replayed. A platform value that reaches one of them with
    another type than the chart's default (a string where values.yaml has a map, a number where it
    has a string, a scalar where the template walks into a map, ...) is reported here, naming the
    template and the path: it is not checked without helm, and the platform release may fail on it
    in the cluster. The list of such (template, path) pairs is generated from each chart version
    (`renderer/_generated/platform/<version>.json`, `readsBy`); cozy-render's own test suite
    fails when a template gains a read that is neither replayed nor reported. A value the model
    already refuses (PLT-13) is not reported again, and `check --chart helm` reports none: it renders
    every template with helm (a failure is PLT-CHART, with the template's own message).
    """,
    ["C:packages/core/platform/templates/*.yaml", "C:packages/core/platform/values.yaml",
     "renderer/_generated/platform/<version>.json (readsBy)"],
)
def plt_18(ctx: RuleContext) -> Iterator[Hit]:
    from renderer.platform_chart.model import go_kind

    if ctx.platform.source == "helm":
        return  # `check --chart helm` rendered every template with helm: checked (PLT-CHART when it fails)
    f = facts(ctx)
    platform = platform_package(ctx)
    values = ((spec_of(platform).get("components") or {}).get("platform") or {}).get("values") \
        if platform is not None else None
    if not isinstance(values, dict):
        return
    from renderer.resolve.platform import per_chart

    # The chart's defaults for the variant: one tree per chart version and variant, read only here.
    defaults = per_chart(f.chart, ("defaults", f.variant), lambda: f.chart.effective_values(f.variant, {}))
    refused = [p.key for p in f.chart_problems if p.key]
    reported: set[tuple[str, ...]] = set()
    for template, path in f.chart.unchecked_reads():
        keys = tuple(path.split("."))
        for depth in range(1, len(keys) + 1):
            prefix = keys[:depth]
            written = dig(values, *prefix, default=_MISSING)
            if written is _MISSING or written is None:
                break  # not set here (null deletes the key: the template sees no value)
            if depth < len(keys):
                if isinstance(written, dict):
                    continue
                expected = "map"  # the template walks into it
            else:
                default = dig(defaults, *prefix, default=_MISSING)
                if default is _MISSING or default is None:
                    break
                expected = go_kind(default)
                if go_kind(written) == expected:
                    break
            if prefix not in reported and not any(key[:depth] == prefix or prefix[:len(key)] == key
                                                  for key in refused):
                reported.add(prefix)
                yield _values_hit(ctx, f"{'.'.join(prefix)}: {_KIND_NAMES[go_kind(written)]} reaches "
                                       f"{template} (platform chart {f.chart.version}), where the chart's default is "
                                       f"{_KIND_NAMES[expected]}; the render path does not replay that template: not "
                                       "checked without helm.", prefix)
            break
