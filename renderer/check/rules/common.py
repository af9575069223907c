"""What several rule families share: the catalogue and platform facts of the render, the
PackageSources it knows, the hand-written Packages, and how hits are located and values quoted."""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import json
from typing import Any, NamedTuple

from renderer.check.rules import Hit, RuleContext
from renderer.model import PACKAGE_API, PLATFORM_PACKAGE, Emitted
from renderer.resolve.platform import PlatformFacts, RenderedPackage


class SourceVariant(NamedTuple):
    depends_on: list[str] | None  # None: the reference does not give it
    components: dict[str, bool]  # component name -> has an install block


class PackageSourceInfo:
    def __init__(self, name: str, variants: dict[str, SourceVariant] | None = None,
                 partial_variants: bool = False, partial_components: bool = False) -> None:
        self.name = name
        self.variants = variants if variants is not None else {}
        self.partial_variants = partial_variants
        self.partial_components = partial_components


def catalogue(ctx: RuleContext) -> dict[str, Any]:
    """The shipped catalogue with the PackageSources of the cluster's chart version (from the plan)."""
    return ctx.facts.catalogue


def facts(ctx: RuleContext) -> PlatformFacts:
    """What the cluster's chart version does with its platform values (computed once, by resolve)."""
    return ctx.facts


def platform_package(ctx: RuleContext) -> Emitted | None:
    for e in ctx.objects:
        if e.is_package(PLATFORM_PACKAGE):
            return e
    return None


def sources(ctx: RuleContext) -> dict[str, PackageSourceInfo]:
    """PackageSources by name: the catalogue, overridden by PackageSource objects in the render."""
    return ctx.memo("package-sources", lambda: _sources(ctx))


def _sources(ctx: RuleContext) -> dict[str, PackageSourceInfo]:
    out = dict(_catalogue_sources(catalogue(ctx)))
    for e in ctx.objects:
        if e.api_version == PACKAGE_API and e.kind == "PackageSource" and e.name:
            out[e.name] = _source_from_object(e)
    return out


# The catalogue's PackageSources, per catalogue: the versioned catalogue is one shared, read-only object
# per chart version (renderer.platform_chart.model.versioned_catalogue), so a fleet reads it once, not
# once per cluster (issue 24). Rules only read PackageSourceInfo; _sources copies the mapping.
_CATALOGUE_SOURCES: dict[int, tuple[dict[str, Any], dict[str, PackageSourceInfo]]] = {}


def _catalogue_sources(catalogue: dict[str, Any]) -> dict[str, PackageSourceInfo]:
    found = _CATALOGUE_SOURCES.get(id(catalogue))
    if found is not None and found[0] is catalogue:
        return found[1]
    out = _read_catalogue_sources(catalogue)
    if len(_CATALOGUE_SOURCES) > 8:
        _CATALOGUE_SOURCES.clear()
    _CATALOGUE_SOURCES[id(catalogue)] = (catalogue, out)
    return out


def _read_catalogue_sources(catalogue: dict[str, Any]) -> dict[str, PackageSourceInfo]:
    out: dict[str, PackageSourceInfo] = {}
    for name, entry in (catalogue.get("packages") or {}).items():
        partial = entry.get("partial") or []
        partial = ["variants", "components"] if partial is True else list(partial)
        info = PackageSourceInfo(name, partial_variants="variants" in partial,
                                 partial_components="components" in partial)
        for vname, v in (entry.get("variants") or {}).items():
            v = v or {}
            components = {c: bool((spec or {}).get("install")) for c, spec in (v.get("components") or {}).items()}
            info.variants[vname] = SourceVariant(v.get("dependsOn") if "dependsOn" in v else None, components)
        out[name] = info
    return out


def _source_from_object(e: Emitted) -> PackageSourceInfo:
    info = PackageSourceInfo(e.name)
    raw_spec = e.obj.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    for v in spec.get("variants") or []:
        if not isinstance(v, dict) or not isinstance(v.get("name"), str) or v["name"] in info.variants:
            continue  # the controller takes the first variant of a name (reference (a))
        components = {str(c.get("name")): c.get("install") is not None
                      for c in v.get("components") or [] if isinstance(c, dict)}
        depends = [d for d in v.get("dependsOn") or [] if isinstance(d, str)]
        info.variants[v["name"]] = SourceVariant(depends, components)
    return info


def hand_written(ctx: RuleContext) -> list[Emitted]:
    """Child Packages the user wrote (packages: entries, manifests), including ones merged over a feature's.

    Told apart by the overlay, not by role: features emit their Packages with roles of their own
    choosing (and follow their own rules, GPU-*/HUB-*).
    """
    names = set(ctx.overlay.get("packages") or {})
    return [e for e in ctx.packages()
            if not e.is_package(PLATFORM_PACKAGE) and (e.role == "manifest" or e.name in names)]


def co_managed(ctx: RuleContext, e: Emitted) -> RenderedPackage | None:
    """The platform's own rendering of ``e`` when the platform release also renders it (not disabled)."""
    if e.is_package(PLATFORM_PACKAGE):
        return None
    return ctx.platform.packages.get(e.name)


def spec_of(e: Emitted) -> dict[str, Any]:
    spec = e.obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def written_variant(e: Emitted) -> str | None:
    variant = spec_of(e).get("variant")
    return str(variant) if variant not in (None, "") else None


def effective_variant(ctx: RuleContext, e: Emitted) -> str:
    """The variant the controller will use: spec.variant, else the platform's for a co-managed
    Package (our object does not carry it), else "default" (package_reconciler.go)."""
    written = written_variant(e)
    if written is not None:
        return written
    rendered = co_managed(ctx, e)
    return rendered.variant if rendered is not None else "default"


def desired_packages(ctx: RuleContext) -> dict[str, tuple[str, Emitted | None, RenderedPackage | None]]:
    """Every Package the cluster will hold after sync: ours and the platform's, with its variant."""
    out: dict[str, tuple[str, Emitted | None, RenderedPackage | None]] = {}
    for name, rendered in ctx.platform.packages.items():
        out[name] = (rendered.variant, None, rendered)
    for e in ctx.packages():
        out[e.name] = (effective_variant(ctx, e), e, co_managed(ctx, e))
    return out


def variant_hit_path(e: Emitted) -> tuple[str, ...]:
    return ("spec", "variant") if "variant" in spec_of(e) else ("spec",)


def platform_list_hit(ctx: RuleContext, message: str, key: str, name: str | None,
                       severity: str | None = None) -> Hit:
    """A hit at the overlay's bundles.<key> entry ``name`` when the user wrote it, else at the platform."""
    position = ctx.memo(f"bundles-{key}-positions", lambda: _first_positions(ctx, key)).get(name) \
        if isinstance(name, str) else None
    if position is not None:
        return Hit(message, overlay_path=("platform", "values", "bundles", key, position), severity=severity)
    platform = ctx.memo("platform-package", lambda: platform_package(ctx))
    path = ("spec", "components", "platform", "values", "bundles", key)
    if platform is not None:
        return Hit(message, platform, path, severity=severity)
    return Hit(message, overlay_path=("platform",), severity=severity)


def _first_positions(ctx: RuleContext, key: str) -> dict[str, int]:
    """Where each name first appears in the overlay's bundles.<key>: one pass, so a hit per entry stays
    linear (a list.index per hit was quadratic: 97k entries took minutes, issue 25 item 3)."""
    listed = ctx.overlay.get("platform", "values", "bundles", key)
    positions: dict[str, int] = {}
    for i, name in enumerate(listed if isinstance(listed, list) else []):
        if isinstance(name, str):
            positions.setdefault(name, i)
    return positions


def dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
