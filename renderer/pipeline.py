"""The pipeline: load -> merge -> resolve -> emit -> check, for one cluster or many.

Stages: ``renderer.load.overlay`` loads and merges the layers (with ``renderer.load.yamlio``,
``renderer.load.templating``, ``renderer.load.overlay_schema``), ``renderer.resolve`` turns the merged overlay
and the variant data into a plan, ``renderer.emit`` writes the objects, and ``renderer.check.schemas`` and
``renderer.check.rules`` check them. ``renderer.output`` serialises the result. Returns results; never
prints or exits.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from renderer import batch
from renderer.emit import RenderResult, emit
from renderer.errors import ERROR, WARNING, Finding, Location, RenderError
from renderer.load.overlay import load_overlay
from renderer.load.variants import Variants
from renderer.resolve import resolve
from renderer.resolve.platform import PlatformView


def render(path: Path, *, variants: Path | None = None, root: Path | None = None,
           extra_vars: dict[str, str] | None = None, kubernetes_version: str | None = None,
           validator: str = "auto", refuse: bool = True,
           platform_view: Callable[[RenderResult], PlatformView] | None = None) -> RenderResult:
    """Render one cluster through every stage, checks included.

    With ``refuse`` (the default), raises RenderError when an error-severity finding remains;
    ``check`` passes ``refuse=False`` to report everything instead. ``extra_vars`` (Argo CD
    parameters) override the overlay's ``vars`` before templating. ``platform_view`` gives the rules
    what the platform renders (``renderer.effective.chart_check.platform_view``: the real chart
    through helm); by default they read the chart model's answer.
    """
    from renderer.check.rules import run_rules
    from renderer.check.schemas import check_objects

    refuse_tree(path)
    overlay = load_overlay(path, root, extra_vars=extra_vars)
    result = emit(resolve(overlay, Variants(variants)))
    # output schemas (renderer.check.schemas): kubeconform-compatible, offline
    result.findings.extend(check_objects(result, kubernetes_version=kubernetes_version, validator=validator))
    view = platform_view(result) if platform_view is not None else None
    result.findings.extend(view.findings if view is not None else ())
    result.findings.extend(run_rules(result, platform=view))
    result.findings[:] = sorted_findings(result.findings)
    if refuse and any(f.severity == ERROR for f in result.findings):
        raise RenderError(result.findings)
    return result


def render_many(paths: list[Path], *, variants: Path | None = None, root: Path | None = None, strict: bool = False,
                extra_vars: dict[str, str] | None = None, kubernetes_version: str | None = None,
                validator: str = "auto") -> tuple[list[RenderResult], list[Finding]]:
    """Render every path; returns (results, warnings). Every failure is collected before raising,
    and with ``strict`` warnings fail the render as errors do."""
    results, failures = [], []
    for p in batch.clusters(paths):  # the collector paused between clusters (renderer.batch)
        try:
            results.append(render(p, variants=variants, root=root, extra_vars=extra_vars,
                                  kubernetes_version=kubernetes_version, validator=validator))
        except RenderError as exc:
            failures.extend(exc.findings)
    warnings = [f for r in results for f in r.findings if f.severity == WARNING]
    if failures or (strict and warnings):
        raise RenderError(failures + warnings)
    return results, warnings


def check_cluster(path: Path, **options: Any) -> list[Finding]:
    """Every finding of one cluster (schemas and rules included), without refusing."""
    return render(path, refuse=False, **options).findings


def cluster_paths(path: Path, all_clusters: bool) -> list[Path]:
    """PATH itself, or with ``--all`` every ``clusters/*/cluster.yaml`` folder of the tree at PATH."""
    if not all_clusters:
        return [path]
    clusters = path / "clusters" if (path / "clusters").is_dir() else path
    found = sorted(p.parent for p in clusters.glob("*/cluster.yaml"))
    if not found:
        raise RenderError([Finding("OVL-PATH", f"--all: no */cluster.yaml under {clusters}")])
    return found


def refuse_tree(path: Path) -> None:
    """A folder holding clusters/ is an overlay tree, not a cluster: say how to render all of it."""
    if path.is_dir() and not (path / "cluster.yaml").exists() and (path / "clusters").is_dir():
        from renderer.load.yamlio import display_path

        raise RenderError([Finding("OVL-PATH", f"no overlay at {display_path(path)}: it is an overlay tree "
                                               f"(it holds clusters/); render every cluster with --all, or one with "
                                               f"{display_path(path / 'clusters')}/NAME",
                                   Location(display_path(path)))])


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Stable order by location; one report per problem.

    A rule and the output schema can both catch one mistake (``spec.values`` is PKG-05 and an
    additional property of the CRD): the rule's message says what to do, so a SCHEMA finding on a
    line a rule already reported is dropped.
    """
    def key(f: Finding) -> tuple[Any, ...]:
        loc = f.location or Location("")
        return (loc.path, loc.line, loc.col, f.code, f.message)

    unique = {(f.code, f.message, f.location, f.severity): f for f in findings}
    ruled = {(f.location.path, f.location.line) for f in unique.values()
             if f.location and f.code != SCHEMA_CODE and f.severity == ERROR}
    kept = [f for f in unique.values()
            if not (f.code == SCHEMA_CODE and f.location and (f.location.path, f.location.line) in ruled)]
    return sorted(kept, key=key)


SCHEMA_CODE = "SCHEMA"


