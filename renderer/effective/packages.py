"""The effective Package set: what the platform chart emits, with cozy-render's own objects on top.

- Packages the chart emits for the rendered platform values are ``platform``.
- A cozy-render patch of the same name (``render.cozystack.io/ownership: patch``: a ``packages:``
  entry tuning a platform Package, Hubble's patch) is applied over the platform's object, which the
  platform release keeps writing: maps merge key by key, lists (untyped, hence atomic) replace. The
  result is ``co-managed`` (check's PLT-11).
- A plain object of the same name (a ``manifests:`` Package: no patch ownership, so the GitOps tool
  syncs, prunes and deletes it as its own) is merged the same way, as the apply leaves it, but it is
  ``contested``: two writers of the whole object, not a patch (check's PLT-11 says so).
- Any other cozy-render Package (its own, including one it took over by disabling it on the
  platform, e.g. Hubble ``own``) replaces or adds to the set: ``cozy-render``. The platform Package
  itself is cozy-render's too.
- Packages in ``bundles.disabledPackages`` are not emitted by the chart, so they are absent unless
  cozy-render renders them itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from renderer.effective.helm import (
    ASSUMED_ABSENT,
    ChartRender,
    HelmFailure,
    chart_sources,
    render_platform,
    require_helm,
)
from renderer.errors import Finding, Location, RenderError, fail
from renderer.model import OWNERSHIP_ANNOTATION, PACKAGE_API, PLATFORM_PACKAGE
from renderer.platform_chart import chart_dir, unknown_version_message, version_known

PLATFORM, COZY_RENDER, CO_MANAGED, CONTESTED = "platform", "cozy-render", "co-managed", "contested"


class EffectivePackage(NamedTuple):
    name: str
    variant: str
    origin: str  # platform | cozy-render | co-managed | contested
    obj: dict[str, Any]

    @property
    def components(self) -> list[str]:
        spec = self.obj.get("spec") if isinstance(self.obj.get("spec"), dict) else {}
        components = spec.get("components") if isinstance(spec, dict) else None
        return sorted(components) if isinstance(components, dict) else []

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "variant": self.variant, "origin": self.origin, "components": self.components,
                "object": self.obj}


class EffectiveSet(NamedTuple):
    version: str
    chart: Path
    packages: list[EffectivePackage]
    package_sources: int
    assumed_absent: tuple[str, ...]
    judge: str = ""  # who said what the platform chart renders (``ChartChoice.judge``)


def platform_inputs(result: Any) -> tuple[str, dict[str, Any], Any]:
    """(platform variant, rendered platform values, the platform Emitted) of a render result."""
    for e in result.objects:
        if e.is_package(PLATFORM_PACKAGE):
            spec = e.obj.get("spec") if isinstance(e.obj.get("spec"), dict) else {}
            values = ((spec.get("components") or {}).get("platform") or {}).get("values")
            return str(spec.get("variant") or "default"), values if isinstance(values, dict) else {}, e
    return "default", {}, None


def ssa_merge(base: Any, over: Any) -> Any:
    """Server-side apply of ``over`` onto ``base`` for untyped (preserve-unknown-fields) data: maps
    merge, lists and scalars replace."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = ssa_merge(out.get(key), value)
        return out
    return over


def effective_set(result: Any, helm: str, chart: Path, version: str,
                  rendered: ChartRender | None = None, judge: str = "") -> EffectiveSet:
    """The effective set of ``result`` from ``rendered`` (rendered here when not given: helm's own
    failure is then PLT-HELM at the chart's Chart.yaml)."""
    variant, values, platform = platform_inputs(result)
    if rendered is None:
        try:
            rendered = render_platform(helm, chart, variant, values)
        except HelmFailure as exc:
            raise fail("PLT-HELM", exc.message, Location(str(chart / "Chart.yaml"), 1, 1)) from None
    if rendered.failure is not None:
        where = platform.source if platform is not None else None
        raise RenderError([Finding("PLT-CHART", f"the platform chart {version} fails "
                                   f"({rendered.failure.where}): {rendered.failure.message}", where)])
    return EffectiveSet(version, chart, combine(rendered, result), len(chart_sources(chart)), ASSUMED_ABSENT,
                        judge)


def combine(rendered: ChartRender, result: Any) -> list[EffectivePackage]:
    out: dict[str, EffectivePackage] = {}
    for name, obj in rendered.packages().items():
        out[name] = EffectivePackage(name, _variant(obj), PLATFORM, obj)
    for e in result.objects:
        if e.api_version != PACKAGE_API or e.kind != "Package":
            continue
        ours = e.obj
        # Any object of ours that the platform release also renders (a patch, or a manifests: or
        # packages: Package of a platform-rendered name) is applied over the platform's: both write
        # it, as check's PLT-11 says. Only a Package the platform does not render (disabled, e.g.
        # Hubble own) is cozy-render's alone.
        if e.name in out and out[e.name].origin == PLATFORM:
            merged = ssa_merge(out[e.name].obj, ours)
            origin = CO_MANAGED if is_patch(ours) else CONTESTED
            out[e.name] = EffectivePackage(e.name, _variant(merged), origin, merged)
        else:
            out[e.name] = EffectivePackage(e.name, _variant(ours), COZY_RENDER, ours)
    return [out[name] for name in sorted(out)]


def is_patch(obj: dict[str, Any]) -> bool:
    """Whether cozy-render emits ``obj`` as a patch (``render.cozystack.io/ownership: patch``), not a
    plain object it syncs, prunes and deletes as its own."""
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return isinstance(annotations, dict) and annotations.get(OWNERSHIP_ANNOTATION) == "patch"


def _variant(obj: dict[str, Any]) -> str:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    variant = spec.get("variant") if isinstance(spec, dict) else None
    return str(variant) if variant not in (None, "") else "default"


def cluster_chart(result: Any, override: Path | None = None) -> tuple[str, Path]:
    """(version label, chart folder) the cluster's platform release is rendered from: the vendored
    chart of the version resolve chose (``result.plan.facts.version``), or ``override``. An unknown
    ``platform.version`` without an override is PLT-VERSION (resolve has already said so)."""
    if override is not None:
        return str(override), override
    written = result.overlay.get("platform", "version")
    if written is not None and not (isinstance(written, str) and version_known(written)):
        raise fail("PLT-VERSION", unknown_version_message(written),
                   result.overlay.locate(("platform", "version")))
    version = str(result.plan.facts.version)
    return version, chart_dir(version)


def effective_packages(result: Any, helm: str | None = None, chart: Path | None = None) -> list[EffectivePackage]:
    """The effective Package set of a render result, for ``diff --effective`` (issue 10 item 6).

    Compare these with the live Packages: a ``platform`` or ``co-managed`` Package whose live spec
    differs is a hand edit the platform release will revert; a live Package with
    ``helm.sh/resource-policy: keep`` that is not in the set is a keep-policy leftover (PLT-09).
    ``helm`` defaults to the one on PATH (PLT-HELM when there is none); ``chart`` to the vendored
    chart of the cluster's ``platform.version`` (PLT-VERSION when that is not shipped).
    """
    binary = require_helm(helm)
    version, folder = cluster_chart(result, chart)
    return effective_set(result, binary, folder, version).packages
