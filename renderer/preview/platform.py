"""The platform's reaction to a change: the effective Package set of each side, and what differs.

The platform chart turns the platform Package's values into its child Packages; a values edit can
make it add, drop or change one (reference (b); ``renderer.effective``). For each side:

- with a ``helm`` (``--helm``, else on PATH): the vendored chart of the cluster's ``platform.version``
  (or ``--platform-chart``) rendered by the real helm, values layered as the operator does
  (``renderer.effective.helm.render_platform``), with cozy-render's own Packages on top
  (``renderer.effective.packages.combine``: patches merged as server-side apply would,
  ``co-managed``; our other Packages ``cozy-render``; the rest ``platform``);
- without one: the built-in model of the same chart version (``PlatformFacts.rendered_packages``,
  generated from the chart's templates), which knows each Package's name, variant and the
  component values it can decide offline; reported as a prediction.

One ``helm template`` per distinct (chart, variant, values): a fleet sharing its platform values
renders the chart once, and the review renders a chunk of clusters' charts ahead many to a helm
process (``Reactor.prepare``). A cluster whose platform Package and own Packages are the same on both
sides gets the same effective set, so it is not rendered at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from renderer.diff.normalize import normalise
from renderer.effective.chart_check import model_render
from renderer.effective.helm import ChartRender, HelmFailure, render_platform, render_platform_many
from renderer.effective.packages import combine, platform_inputs
from renderer.errors import Location, RenderError, fail
from renderer.model import PACKAGE_API
from renderer.pipeline import default_jobs
from renderer.platform_chart import DEFAULT_VERSION, chart_dir, shipped_versions, version_known
from renderer.preview.objects import value_changes

HELM, MODEL = "helm", "model"
ADDED, REMOVED, CHANGED = "added", "removed", "changed"


class SideSet(NamedTuple):
    """The effective Packages of one side by name (origin, object), or why the chart fails there."""

    packages: dict[str, tuple[str, dict[str, Any]]]
    failure: str | None


class PackageChange(NamedTuple):
    name: str
    status: str  # added | removed | changed
    origin_base: str | None
    origin_head: str | None
    variant_base: str | None
    variant_head: str | None
    changes: list[dict[str, Any]]

    @property
    def platform_made(self) -> bool:
        """The platform chart renders it on at least one side (alone or with our patch merged)."""
        return any(o not in (None, "cozy-render") for o in (self.origin_base, self.origin_head))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status,
                "origin": {"base": self.origin_base, "head": self.origin_head},
                "variant": {"base": self.variant_base, "head": self.variant_head}, "changes": self.changes}


class PlatformDelta(NamedTuple):
    source: str  # helm | model
    changes: list[PackageChange]  # platform-made Packages only (ours are in the object diff)
    failure_base: str | None
    failure_head: str | None

    def count(self, status: str) -> int:
        return sum(1 for c in self.changes if c.status == status)

    @property
    def different(self) -> bool:
        return bool(self.changes) or self.failure_base != self.failure_head


class Reactor:
    """Computes effective sets, one chart render per distinct input (for the whole run)."""

    def __init__(self, helm: str | None, platform_chart: Path | None) -> None:
        self.helm = helm
        self.platform_chart = platform_chart
        self.source = HELM if helm is not None else MODEL
        self._charts: dict[tuple[str, str, str], Any] = {}
        self.helm_runs = 0

    def delta(self, base: Any | None, head: Any | None) -> PlatformDelta | None:
        """What the platform does differently at the head; None when both sides give the same set
        for certain (same platform Package and same own Packages) or neither side rendered."""
        if base is None and head is None:
            return None
        if base is not None and head is not None and _package_inputs(base) == _package_inputs(head):
            return None
        before = self.effective(base) if base is not None else SideSet({}, None)
        after = self.effective(head) if head is not None else SideSet({}, None)
        changes = []
        for name in sorted(set(before.packages) | set(after.packages)):
            old, new = before.packages.get(name), after.packages.get(name)
            if old is not None and new is not None and old[0] == new[0] and \
                    (old[1] == new[1] or normalise(old[1]) == normalise(new[1])):
                continue
            status = ADDED if old is None else REMOVED if new is None else CHANGED
            change = PackageChange(name, status, old[0] if old else None, new[0] if new else None,
                                   _variant(old[1]) if old else None, _variant(new[1]) if new else None,
                                   value_changes(normalise(old[1]).get("spec") if old else None,
                                                 normalise(new[1]).get("spec") if new else None, ("spec",))
                                   if status == CHANGED else [])
            if change.platform_made:
                changes.append(change)
        return PlatformDelta(self.source, changes, before.failure, after.failure)

    def prepare(self, pairs: list[tuple[Any | None, Any | None]]) -> None:
        """Render ahead, many clusters to a helm process (``render_platform_many``), the charts that
        ``delta`` will ask for on these (base, head) results: the same renders, so the same answers and
        the same ``helm_runs`` (tests/preview/test_platform_batch.py)."""
        if self.helm is None:
            return

        wanted: dict[Path, dict[tuple[str, str, str], tuple[str, Any]]] = {}
        for base, head in pairs:
            if base is None and head is None:
                continue
            if base is not None and head is not None and _package_inputs(base) == _package_inputs(head):
                continue  # delta decides without the chart
            for result in (base, head):
                if result is None:
                    continue
                try:
                    chart, key, inputs = self._input(result)
                except RenderError:
                    continue  # effective() reports it for this side
                if key not in self._charts:
                    wanted.setdefault(chart, {})[key] = inputs

        for chart, items in wanted.items():
            try:  # both sides of a chunk: a few batches, side by side on the cores available
                renders = render_platform_many(self.helm, chart, list(items.values()), default_jobs())
            except HelmFailure as exc:
                raise _helm_failure(chart, exc) from None
            for key, rendered in zip(items, renders, strict=True):
                self._charts[key] = rendered
                self.helm_runs += 1

    def effective(self, result: Any) -> SideSet:
        try:
            rendered = self._chart(result) if self.helm is not None else self._model(result)
        except RenderError as exc:
            if any(f.code == "PLT-HELM" for f in exc.findings):
                raise  # helm's own failure is never the chart's answer for a side
            return SideSet({}, "; ".join(f.message for f in exc.findings))
        if rendered.failure is not None:
            return SideSet({}, f"the platform chart fails ({rendered.failure.where}): {rendered.failure.message}")
        assert isinstance(rendered, ChartRender)

        return SideSet({p.name: (p.origin, p.obj) for p in combine(rendered, result)}, None)

    def _input(self, result: Any) -> tuple[Path, tuple[str, str, str], tuple[str, Any]]:
        """(chart folder, memo key, (variant, values)) of a side's platform release."""
        version = str(result.overlay.get("platform", "version") or DEFAULT_VERSION)
        if self.platform_chart is None and not version_known(version):
            raise fail("PLT-VERSION", f"platform.version {version} is not vendored (shipped: "
                       f"{', '.join(shipped_versions())}); pass --platform-chart DIR")
        chart = chart_dir(version, self.platform_chart)
        variant, values, _ = platform_inputs(result)
        return chart, (str(chart), variant, json.dumps(values, sort_keys=True, default=str)), (variant, values)

    def _chart(self, result: Any) -> Any:
        chart, key, (variant, values) = self._input(result)
        if key not in self._charts:
            assert self.helm is not None
            try:
                self._charts[key] = render_platform(self.helm, chart, variant, values)
            except HelmFailure as exc:
                raise _helm_failure(chart, exc) from None
            self.helm_runs += 1
        return self._charts[key]

    @staticmethod
    def _model(result: Any) -> Any:
        """The model's prediction as a ChartRender (the one ``effective --chart model`` prints)."""
        return model_render(result)


def _helm_failure(chart: Path, exc: Any) -> RenderError:
    """helm's own failure (a limit, a crash): PLT-HELM at the chart, never a side's chart failure."""
    return fail("PLT-HELM", exc.message, Location(str(chart / "Chart.yaml"), 1, 1))


def _variant(obj: dict[str, Any]) -> str:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    variant = spec.get("variant") if isinstance(spec, dict) else None
    return str(variant) if variant not in (None, "") else "default"


def _package_inputs(result: Any) -> str:
    """Everything the effective set depends on besides the chart: our Packages and the chart version."""
    packages = [e.obj for e in result.objects if e.api_version == PACKAGE_API and e.kind == "Package"]
    version = result.overlay.get("platform", "version")
    return json.dumps([version, packages], sort_keys=True, default=str)
