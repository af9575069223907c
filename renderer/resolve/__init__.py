"""The resolve stage: the merged overlay plus the variant data become a frozen ``Plan``.

Features (``renderer.resolve.features``) contribute platform values, Packages the platform must enable or
disable, and standalone objects. The Packages lists are then merged into ``bundles.*Packages`` and
the platform facts (``renderer.resolve.platform.PlatformFacts``: what the platform chart will do) are
computed once from the final values. Emit, labels and rules read them from the plan; nothing later
computes them again.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

from pathlib import Path
from typing import Any, NamedTuple

from renderer.errors import ERROR, Finding, Location
from renderer.load.overlay import Overlay
from renderer.load.variants import Variants
from renderer.model import Derived, Emitted
from renderer.resolve.platform import PlatformFacts
from renderer.tree import copy_tree


class Plan(NamedTuple):
    """What the cluster will get, before it is written out as objects."""

    overlay: Overlay
    variants: Variants
    platform_variant: str | None
    platform_values: dict[str, Any]  # final: features applied, enabled/disabled lists merged
    facts: PlatformFacts  # of platform_variant + platform_values
    enabled_packages: dict[str, Location | None]  # name -> the overlay value that asked for it
    disabled_packages: dict[str, Location | None]
    objects: tuple[Emitted, ...]  # contributed by features, in feature order
    findings: tuple[Finding, ...]
    inputs: tuple[Path, ...]  # every repository file read so far
    derived: tuple[Derived, ...] = ()  # platform values features set (prefix: a path in platform_values)
    gpu_route: str = "none"  # passthrough | vgpu | container | talos-native | none (the GPU feature's choice)


def resolve(overlay: Overlay, variants: Variants) -> Plan:
    from renderer.platform_chart.model import versioned_catalogue
    from renderer.resolve.features import FEATURES
    from renderer.resolve.features.context import FeatureContext

    variant = overlay.get("platform", "variant")
    values = copy_tree(overlay.get("platform", "values") or {})
    version, version_findings = chart_version(overlay)
    # The catalogue with the PackageSources of the cluster's chart version (generated from the chart).
    catalogue = versioned_catalogue(variants.catalogue(), version)
    ctx = FeatureContext(overlay, variants, values,
                         PlatformFacts(catalogue, variant, copy_tree(values), version=version))
    ctx.findings.extend(version_findings)
    for feature in FEATURES:
        feature(ctx)
    _merge_package_lists(values, ctx.enabled_packages, ctx.disabled_packages)
    return Plan(overlay, variants, variant, values, PlatformFacts(catalogue, variant, values, version=version),
                dict(ctx.enabled_packages), dict(ctx.disabled_packages), tuple(ctx.objects), tuple(ctx.findings),
                tuple(ctx.inputs), tuple(ctx.derived), ctx.gpu_route)


def chart_version(overlay: Overlay) -> tuple[str, list[Finding]]:
    """The platform chart version the cluster runs: ``platform.version``, else the default (the
    latest vendored release). A version that names no vendored chart is PLT-VERSION, decided here
    so that every command that resolves (render, check, cmp generate, ls, effective) reports it;
    the rest of the render is judged by the default chart so its other findings still show."""
    from renderer.platform_chart import DEFAULT_VERSION, shipped_versions, unknown_version_message

    written = overlay.get("platform", "version")
    if written is None:
        return DEFAULT_VERSION, []
    if isinstance(written, str) and written in shipped_versions():
        return written, []
    shown = written if isinstance(written, str) else repr(written)
    return DEFAULT_VERSION, [Finding("PLT-VERSION", unknown_version_message(shown),
                                     overlay.locate(("platform", "version")), ERROR)]


def _merge_package_lists(values: dict[str, Any], enabled: dict[str, Location | None],
                         disabled: dict[str, Location | None]) -> None:
    """Add the features' names to ``bundles.enabledPackages``/``disabledPackages`` (sorted, unique)."""
    bundles = values.get("bundles") if isinstance(values.get("bundles"), dict) else None
    for key, extra in (("enabledPackages", enabled), ("disabledPackages", disabled)):
        user = (bundles or {}).get(key)
        if isinstance(user, dict) and not user:
            user = None  # the chart reads `default (list) {}` as an empty list: so do we
        names = list(user) if isinstance(user, list) else []
        if not extra and not isinstance(user, list):
            continue
        if not isinstance(user, list) and user is not None:
            continue  # not a list: leave it for the rules to report, do not guess
        # Names sort and merge; an entry that is not a string (PLT-08: the chart's `has` never matches
        # it) stays after them, in the user's order, as the chart would see it.
        others = [name for name in names if not isinstance(name, str)]
        merged = sorted({name for name in names if isinstance(name, str)} | set(extra)) + others
        if merged:
            bundles = values.setdefault("bundles", {}) if bundles is None else bundles
            bundles[key] = merged
        elif bundles is not None:
            bundles.pop(key, None)
    if bundles is not None and not bundles:
        values.pop("bundles", None)
