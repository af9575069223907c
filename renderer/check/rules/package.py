"""PKG-*: rules on the Package API itself (reference section (g), "Package / PackageSource API").

A Package is resolved by the PackageSource of the same name (reference (a)); what we know about
each PackageSource comes from ``variants/catalogue.yaml`` (``packages:``) and from any PackageSource
the render itself carries. Where the catalogue marks a list ``partial``, checks that would need the
full list are skipped instead of guessed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from renderer.check.rules import Hit, RuleContext, rule
from renderer.check.rules.common import (
    co_managed,
    desired_packages,
    effective_variant,
    facts,
    platform_list_hit,
    sources,
    spec_of,
    variant_hit_path,
    written_variant,
)
from renderer.errors import ERROR, WARNING
from renderer.model import GPU_OPERATOR, HAMI, PACKAGE_API, PLATFORM_PACKAGE, Emitted

_SOURCE_TYPES = "C:api/v1alpha1/package_types.go (scope=Cluster)"
_RECONCILER = "C:internal/operator/package_reconciler.go"
SPEC_FIELDS = ("variant", "ignoreDependencies", "components")
COMPONENT_FIELDS = ("enabled", "values")
# A rule that checks the same thing more specifically for one Package reports it instead (report once).
_SPECIFIC_VARIANT_RULES = {GPU_OPERATOR: "GPU-01", PLATFORM_PACKAGE: "PLT-02"}
# Likewise for a dependency: (package, dependency) -> the rule that explains that one missing edge.
_SPECIFIC_DEPENDENCY_RULES = {(HAMI, GPU_OPERATOR): "HAMI-02"}


def _deferred(name: str) -> bool:
    return name in _SPECIFIC_VARIANT_RULES


# ---- the rules ----

@rule(
    "PKG-01", ERROR,
    "Package is cluster-scoped: remove metadata.namespace",
    """
    Package (packages.cozystack.io) is a cluster-scoped resource. A namespace on it is dropped by the
    API server, so the stored object never matches what Git holds and a GitOps diff never converges.
    Several Cozystack docs pages show `namespace: cozy-system` on a Package; that is a docs error.
    """,
    [_SOURCE_TYPES, "C:internal/crdinstall/manifests/cozystack.io_packages.yaml"],
)
def pkg_01(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.packages():
        if (e.obj.get("metadata") or {}).get("namespace"):
            yield Hit(
                "Package is cluster-scoped: remove metadata.namespace (the API server drops it, "
                "and a GitOps diff will never converge).",
                e, ("metadata", "namespace"),
            )


@rule(
    "PKG-02", ERROR,
    "PackageSource is cluster-scoped: remove metadata.namespace",
    """
    PackageSource (packagesources.cozystack.io) is cluster-scoped, like Package. A namespace on it is
    dropped by the API server, so the object in Git never matches the stored one.
    """,
    ["C:api/v1alpha1/packagesource_types.go (scope=Cluster)",
     "C:internal/crdinstall/manifests/cozystack.io_packagesources.yaml"],
)
def pkg_02(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.objects:
        if e.api_version == PACKAGE_API and e.kind == "PackageSource" and \
                isinstance(e.obj.get("metadata"), dict) and e.obj["metadata"].get("namespace"):
            yield Hit("PackageSource is cluster-scoped: remove metadata.namespace.", e, ("metadata", "namespace"))


_MAX_HINTS = 100  # PKG-03 suggestions per render


@rule(
    "PKG-03", ERROR,
    "No PackageSource of the Package's name",
    """
    The controller resolves a Package by fetching the PackageSource with exactly the Package's name; there
    is no other link. Without one the Package stays Ready=False with reason PackageSourceNotFound.

    Known PackageSources are every PackageSource the cluster's platform chart version ships (its
    `sources/*.yaml`, which the platform release applies: `renderer/_generated/platform/<version>.json`),
    the operator-made ones cozy-render's catalogue lists (`variants/catalogue.yaml`), and any
    PackageSource in the render. The platform creates no other: a Package of any other name stays
    Ready=False with PackageSourceNotFound, unless someone created that PackageSource in the cluster by
    hand (which cannot be seen offline; render it in `manifests:` to make it known). The message names
    the closest known name, and another vendored chart version that ships the name.
    """,
    [_RECONCILER + " (Get PackageSource by pkg.Name)", "C:packages/core/platform/sources/*.yaml"],
)
def pkg_03(ctx: RuleContext) -> Iterator[Hit]:
    known = sources(ctx)
    version = ctx.facts.chart.version
    for e in ctx.packages():
        if not e.name or e.name in known:
            continue
        if not e.name.startswith("cozystack."):
            message = f"No PackageSource named {e.name}; the controller will report PackageSourceNotFound."
            prefixed = f"cozystack.{e.name}"
            hint = f" Did you mean {prefixed}?" if prefixed in known else ""
            yield Hit(message + hint, e, ("metadata", "name"))
            continue
        import difflib  # only when a name is unknown

        from renderer.platform_chart import shipped_versions
        from renderer.platform_chart.model import chart_model

        # A fuzzy match costs a SequenceMatcher per known name: suggestions stop after the first
        # _MAX_HINTS unknown names (thousands of them are not typos), keeping the rule linear and cheap.
        hinted = ctx.memo("pkg-03-hints", lambda: [0])
        hinted[0] += 1
        close = difflib.get_close_matches(e.name, list(known), n=1, cutoff=0.85) if hinted[0] <= _MAX_HINTS else []
        hint = f" Did you mean {close[0]}?" if close else ""
        elsewhere = [v for v in shipped_versions() if v != version and e.name in chart_model(v).sources]
        if elsewhere:
            hint += f" (The platform chart {', '.join(elsewhere)} ships it.)"
        yield Hit(f"No PackageSource named {e.name}: the platform chart {version} does not ship one and the "
                  "render has none, so the controller will report PackageSourceNotFound (unless the PackageSource "
                  f"was created in the cluster by hand).{hint}", e, ("metadata", "name"))


@rule(
    "PKG-04", ERROR,
    "Variant not found in the PackageSource",
    """
    The controller looks `spec.variant` (or `default` when it is empty) up by exact name in the
    PackageSource's variants; a miss leaves the Package Ready=False with reason VariantNotFound.
    Checked against the catalogue only where it lists every variant of the source (not `partial`).
    A Package the platform release also renders and that does not set `spec.variant` keeps the
    platform's variant. The platform Package itself is PLT-02's, and gpu-operator's variants are
    GPU-01's.
    """,
    [_RECONCILER + " (VariantNotFound)", "C:packages/core/platform/sources/*.yaml"],
    deferred_to=tuple(_SPECIFIC_VARIANT_RULES.values()),
)
def pkg_04(ctx: RuleContext) -> Iterator[Hit]:
    known = sources(ctx)
    for e in ctx.packages():
        source = known.get(e.name)
        if source is None or source.partial_variants or _deferred(e.name):
            continue
        variant = effective_variant(ctx, e)
        if variant in source.variants:
            continue
        valid = ", ".join(source.variants) or "none"
        empty = " (spec.variant is empty, so the controller uses default)" if written_variant(e) is None else ""
        yield Hit(f"Variant {variant} not found in PackageSource {e.name}{empty} (valid: {valid}).",
                  e, variant_hit_path(e))


@rule(
    "PKG-05", ERROR,
    "Unknown field under spec: values go under spec.components.<component>.values",
    """
    The Package schema is structural: `spec` has exactly `variant`, `ignoreDependencies` and
    `components`, and the API server prunes anything else silently. The usual slip is a top-level
    `spec.values`: component values always go under `spec.components.<component>.values`.
    """,
    ["C:internal/crdinstall/manifests/cozystack.io_packages.yaml",
     "W:virtualization/gpu.md (never a top-level spec.values)"],
)
def pkg_05(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.packages():
        for key in spec_of(e):
            if key not in SPEC_FIELDS:
                yield Hit(f"Unknown field spec.{key}: component values go under "
                          "spec.components.<component>.values.", e, ("spec", key))


@rule(
    "PKG-06", WARNING,
    "Component not installed by the chosen variant; its values are ignored",
    """
    `spec.components` is keyed by component name in the chosen PackageSource variant. The controller
    loops over the variant's components and skips those without an `install` block, so values for a
    component the variant does not have (or does not install) are silently ignored.
    Skipped for PackageSources whose component list the catalogue marks `partial`.
    """,
    [_RECONCILER + " (loop over variant components, Install == nil skipped)",
     "C:packages/core/platform/templates/bundles/system.yaml (monitoring note)"],
)
def pkg_06(ctx: RuleContext) -> Iterator[Hit]:
    known = sources(ctx)
    for e in ctx.packages():
        source = known.get(e.name)
        components = spec_of(e).get("components")
        if source is None or source.partial_components or not isinstance(components, dict):
            continue
        variant = effective_variant(ctx, e)
        chosen = source.variants.get(variant)
        if chosen is None:
            continue  # PKG-04
        for component in components:
            if not chosen.components.get(component, False):
                yield Hit(f"Component {component} is not installed by {e.name}/{variant}; its values are ignored.",
                          e, ("spec", "components", component))


@rule(
    "PKG-07", ERROR,
    "components.<c> accepts only enabled (bool) and values (object)",
    """
    A component entry has two fields: `enabled` and `values`. Other keys are pruned by the API server.
    `values` has no type in the schema, so a scalar or list is accepted and copied verbatim into
    `HelmRelease.spec.values`, where Helm cannot use it and the release fails.
    """,
    ["C:internal/crdinstall/manifests/cozystack.io_packages.yaml", _RECONCILER + " (values copied verbatim)"],
)
def pkg_07(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.packages():
        components = spec_of(e).get("components")
        if not isinstance(components, dict):
            continue
        for name, component in components.items():
            base = ("spec", "components", name)
            accepts = f"components.{name} accepts only enabled (bool) and values (object)"
            if component is None:
                continue
            if not isinstance(component, dict):
                yield Hit(f"{accepts}; it is a {_type_name(component)}.", e, base)
                continue
            for key in component:
                if key not in COMPONENT_FIELDS:
                    yield Hit(f"{accepts}; {key} is pruned by the API server.", e, base + (key,))
            values = component.get("values")
            if values is not None and not isinstance(values, dict):
                yield Hit(f"{accepts}; values is a {_type_name(values)}, which Helm cannot use.", e, base + ("values",))


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "list"}.get(type(value), "scalar")


@rule(
    "PKG-08", ERROR,
    "A variant dependency is not rendered",
    """
    Every `dependsOn` entry of the chosen variant (minus `spec.ignoreDependencies`) must be an existing
    Package whose Ready condition is True, or the controller creates no HelmRelease and reports
    DependenciesNotReady. The desired set is every Package in the render plus every Package the
    platform release renders under the effective platform values. Only variants whose `dependsOn` the
    catalogue (or a PackageSource in the render) gives are checked. A dependency installed in the live
    cluster by other means (cozypkg) is not visible offline. A missing edge a more specific rule
    explains (cozystack.hami -> cozystack.gpu-operator: HAMI-02) is reported by that rule alone.

    One finding per cause: the findings are grouped by the missing dependency. A dependency that one
    Package needs gives `A depends on B, which is not rendered`; one that several need (disabling
    `cozystack.networking`, a bundle rendered without the system bundle) gives one line naming the
    dependency, how many Packages wait on it and the first five of them, located where the
    dependency was taken away (its `bundles.disabledPackages` entry) or else at the first dependent.
    """,
    [_RECONCILER + " (areDependenciesReady)", "C:packages/core/platform/sources/*.yaml"],
    deferred_to=tuple(_SPECIFIC_DEPENDENCY_RULES.values()),
)
def pkg_08(ctx: RuleContext) -> Iterator[Hit]:
    if facts(ctx).chart_problems:
        return  # the platform release itself fails (PLT-*): the Packages it would leave missing are not the news
    known = sources(ctx)
    desired = desired_packages(ctx)
    waiting: dict[str, list[tuple[str, Emitted | None, Any]]] = {}
    for name, (variant, emitted, rendered) in desired.items():
        source = known.get(name)
        chosen = source.variants.get(variant) if source else None
        if chosen is None or chosen.depends_on is None:
            continue
        ignored = _ignored_dependencies(emitted)
        for dep in chosen.depends_on:
            if dep in ignored or dep in desired or (name, dep) in _SPECIFIC_DEPENDENCY_RULES:
                continue
            waiting.setdefault(dep, []).append((name, emitted, rendered))
    for dep, dependents in waiting.items():
        dependents.sort(key=lambda d: (d[1] is None, d[0]))  # hand-written ones first: they are the user's
        name, emitted, rendered = dependents[0]
        if len(dependents) == 1:
            message = f"{name} depends on {dep}, which is not rendered; it will stay DependenciesNotReady."
        else:
            names = sorted(d[0] for d in dependents)
            shown = ", ".join(names[:_SHOWN_DEPENDENTS])
            more = f" and {len(names) - _SHOWN_DEPENDENTS} more" if len(names) > _SHOWN_DEPENDENTS else ""
            message = (f"{dep} is not rendered, and {len(names)} Packages depend on it ({shown}{more}); "
                       "they will stay DependenciesNotReady.")
        if dep in facts(ctx).disabled_packages:
            yield platform_list_hit(ctx, message, "disabledPackages", dep)  # the reason it is missing
        elif emitted is not None:
            yield Hit(message, emitted, variant_hit_path(emitted))
        else:
            yield platform_list_hit(ctx, message, "enabledPackages", rendered.gate if rendered else None)


_SHOWN_DEPENDENTS = 5


def _ignored_dependencies(e: Emitted | None) -> set[str]:
    if e is None:
        return set()
    ignored = spec_of(e).get("ignoreDependencies")
    return {str(d) for d in ignored} if isinstance(ignored, list) else set()


@rule(
    "PKG-09", WARNING,
    "ignoreDependencies entry has no effect",
    """
    `spec.ignoreDependencies` only removes names from the chosen variant's `dependsOn`; a name that is
    not there changes nothing (often a typo, or the dependency of another variant).
    """,
    [_RECONCILER],
)
def pkg_09(ctx: RuleContext) -> Iterator[Hit]:
    known = sources(ctx)
    for e in ctx.packages():
        ignored = spec_of(e).get("ignoreDependencies")
        source = known.get(e.name)
        if not isinstance(ignored, list) or source is None:
            continue
        variant = effective_variant(ctx, e)
        chosen = source.variants.get(variant)
        if chosen is None or chosen.depends_on is None:
            continue
        for i, dep in enumerate(ignored):
            if dep not in chosen.depends_on:
                yield Hit(f"ignoreDependencies entry {dep} has no effect for {e.name}/{variant}.",
                          e, ("spec", "ignoreDependencies", i))


@rule(
    "PKG-10", WARNING,
    "spec.variant is empty and resolves to 'default'",
    """
    There is no API-side default for `spec.variant`: the stored object keeps it empty and the controller
    uses `default`. For the platform Package `default` renders no bundles at all. A child Package the
    platform release also renders keeps the platform's variant, so it is not reported here.
    """,
    [_RECONCILER + ' (variantName = "default")', "C:cmd/cozystack-operator/main.go (variant list)"],
)
def pkg_10(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.packages():
        if written_variant(e) is not None:
            continue
        if e.is_package(PLATFORM_PACKAGE):
            yield Hit("spec.variant is empty and resolves to 'default'; for the platform that renders no bundles.",
                      e, variant_hit_path(e))
        elif co_managed(ctx, e) is None:
            yield Hit(f"spec.variant of {e.name} is empty and resolves to 'default'; set it explicitly.",
                      e, variant_hit_path(e))
