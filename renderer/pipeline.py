"""The pipeline: load -> merge -> resolve -> emit -> check, for one cluster or a whole tree.

``run(path, options)`` is the one place a run is composed: ``--all`` discovery, the stages for each
cluster, refusal, ``--strict``, sorting, and the exit class. Every command calls it (or ``render``,
its one-cluster form); what differs between a terminal and a pipe is only how the caller presents
the ``Run`` it gets back (progress comes through an observer ``run`` calls once per cluster).

Stages: ``renderer.load.overlay`` loads and merges the layers, ``renderer.resolve`` turns the merged
overlay and the variant data into a plan, ``renderer.emit`` writes the objects, and
``renderer.check`` judges them (``check_stage``). ``renderer.output`` serialises the result. Never
prints or exits.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import itertools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from renderer import batch
from renderer.emit import RenderResult, emit
from renderer.errors import ERROR, EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, WARNING, Finding, Location, RenderError
from renderer.load.overlay import load_overlay
from renderer.load.variants import Variants
from renderer.resolve import resolve

if TYPE_CHECKING:  # the chart choice is imported by the check stage only when helm is asked for
    from renderer.effective.choice import ChartChoice


class Options(NamedTuple):
    """How a run renders and judges each cluster (the command layer builds it from a request)."""

    variants: Path | None = None
    root: Path | None = None
    extra_vars: dict[str, str] | None = None  # Argo CD's `vars` parameter, over the overlay's vars
    kubernetes_version: str | None = None
    validator: str = "auto"
    strict: bool = False  # warnings fail as errors do (``failing``)
    refuse: bool = True  # render: an error refuses the cluster (exit 3); check: report it (exit 1)
    chart: "ChartChoice | None" = None  # who says what the platform chart renders; None: the built-in model
    flux: bool = False  # the Flux delivery checks (FLUX-SUBST), part of `check`
    jobs: int = 1  # worker processes for a fleet (``run`` with a ``keep``); output is the same as serial


class ClusterRun(NamedTuple):
    """One cluster of a run: its render (None when the input was refused before one existed) and
    every finding about it, sorted."""

    path: Path
    name: str
    result: RenderResult | None  # None also when a worker rendered it: then ``kept`` holds what was asked
    findings: list[Finding]
    refused: int = EXIT_OK  # the exit code of an input refusal (load, resolve, emit), else 0
    objects: int = 0  # how many objects it rendered
    kept: Any = None  # ``keep(result)``, when the run was given a ``keep``


class Run(NamedTuple):
    clusters: list[ClusterRun]
    options: Options

    @property
    def results(self) -> list[RenderResult]:
        return [c.result for c in self.clusters if c.result is not None]

    def tagged(self) -> list[tuple[str, Finding]]:
        """Every finding with the name of its cluster, cluster by cluster."""
        return [(c.name, f) for c in self.clusters for f in c.findings]

    def findings(self) -> list[Finding]:
        """Every distinct finding of the run, sorted (a shared layer's warning once)."""
        return sorted_findings([f for c in self.clusters for f in c.findings])

    @property
    def exit_code(self) -> int:
        """The exit class: an input refusal (3) over failing findings (3 when rendering, 1 when checking)."""
        code = EXIT_OK
        for cluster in self.clusters:
            if cluster.refused:
                code = max(code, cluster.refused)
            elif failing(cluster.findings, self.options.strict):
                code = max(code, EXIT_INPUT if self.options.refuse else EXIT_FINDINGS)
        return code

    def failures(self) -> list[Finding]:
        """What a refused run reports: every finding of every cluster (the refused ones' and the
        others' warnings alike, so a pipe says what a terminal shows)."""
        return [f for c in self.clusters for f in c.findings]


def failing(findings: list[Finding], strict: bool) -> list[Finding]:
    """The findings that fail a run: errors, and with ``--strict`` warnings too (the one strict rule)."""
    return [f for f in findings if f.severity == ERROR or (strict and f.severity == WARNING)]


Observer = Callable[[ClusterRun], None]
Keep = Callable[[RenderResult], Any]


def run(path: Path, options: Options | None = None, *, all_clusters: bool = False,
        observer: Observer | None = None, keep: Keep | None = None) -> Run:
    """Render and check PATH (with ``all_clusters``, every cluster of the tree at PATH).

    One cluster's refusal never stops the others: each cluster's findings are its own, and the exit
    class (``Run.exit_code``) is the same whoever watches. ``observer`` is called after each cluster,
    in cluster order. ``keep`` projects each render onto what the caller needs (``ClusterRun.kept``);
    only a run with a ``keep`` may use ``options.jobs`` worker processes, which then send back the
    projection instead of the whole render, in the same order, so the caller sees the same run.
    """
    global _SHARED_VARIANTS
    options = options or Options()
    paths = cluster_paths(path, all_clusters)
    clusters = []
    _SHARED_VARIANTS = _shared_variants(options) if len(paths) > 1 else None
    try:
        jobs = min(options.jobs, len(paths) // _PER_WORKER) if keep is not None and _can_fork() else 1
        if jobs > 1 and _helm(options) is None:
            # The first cluster here: the imports, compiled validators, chart model and shared layers it
            # loads are then inherited by every worker instead of being loaded again in each. (With the
            # real chart the first chunk's helm batch is the workers' own: nothing is rendered twice.)
            done: Iterable[ClusterRun] = itertools.chain([run_cluster(paths[0], options, keep)],
                                                         _parallel(paths[1:], options, keep, jobs))
        elif jobs > 1:
            done = _parallel(paths, options, keep, jobs)
        else:
            done = _serial(paths, options, keep)
        for cluster in done:
            clusters.append(cluster)
            if observer is not None:
                observer(cluster)
    finally:
        _SHARED_VARIANTS = None
    return Run(clusters, options)


# The variant data of the running fleet: every cluster of one run reads the same shipped files and
# --variants folder, so they are read (and the shipped ones checked against the bundle) once per run,
# not once per cluster (issue 24). None outside a run of several clusters.
_SHARED_VARIANTS: tuple[Path | None, Variants] | None = None


def _shared_variants(options: Options) -> tuple[Path | None, Variants] | None:
    try:
        return options.variants, Variants(options.variants)
    except RenderError:
        return None  # a broken --variants folder: every cluster reports it, as when each reads it


def _variants(options: Options) -> Variants:
    shared = _SHARED_VARIANTS
    if shared is not None and shared[0] == options.variants:
        return shared[1]
    return Variants(options.variants)


def _serial(paths: list[Path], options: Options, keep: Keep | None) -> Iterator[ClusterRun]:
    if _helm(options) is None:
        yield from (run_cluster(p, options, keep) for p in batch.clusters(paths))  # the collector paused between
        return
    for chunk in _chunks(paths, options):
        yield from run_chunk(chunk, options, keep)


def _helm(options: Options) -> str | None:
    chart = options.chart
    return chart.helm if chart is not None and chart.mode == "helm" else None


def _chunks(paths: list[Path], options: Options, size: int = 1) -> list[list[Path]]:
    """``paths`` in pieces of ``size``; with the real chart, of at least a helm batch."""
    if _helm(options) is not None:
        from renderer.effective.helm import BATCH

        size = max(size, BATCH)
    return [paths[i:i + size] for i in range(0, len(paths), size)]


def run_chunk(paths: list[Path], options: Options, keep: Keep | None = None) -> list[ClusterRun]:
    """``run_cluster`` over ``paths``, in order. When the real chart judges them (``--chart helm``),
    every cluster is emitted first, then their platform charts are rendered in one go, many clusters to
    a helm process (``chart_check.prefetch``), then each is checked: no cluster is rendered twice."""
    helm = _helm(options)
    if helm is None or len(paths) < 2:
        return [run_cluster(p, options, keep) for p in batch.clusters(paths)]
    from renderer.effective.chart_check import prefetch

    staged: list[RenderResult | RenderError] = []
    for cluster_path in batch.clusters(paths):  # the collector paused between
        try:
            staged.append(_emitted(cluster_path, options))
        except RenderError as exc:
            staged.append(exc)  # refused before a chart render: reported below
    prefetch(helm, [r for r in staged if not isinstance(r, RenderError)])
    return [run_cluster(p, options, keep, r) for p, r in batch.clusters(zip(paths, staged, strict=True))]


def run_cluster(path: Path, options: Options, keep: Keep | None = None,
                emitted: RenderResult | RenderError | None = None) -> ClusterRun:
    try:
        if isinstance(emitted, RenderError):
            raise emitted
        result = emitted if emitted is not None else _emitted(path, options)
        check_stage(result, options)
    except RenderError as exc:
        return ClusterRun(path, path.name, None, sorted_findings(exc.findings), exc.exit_code)
    if keep is None:
        return ClusterRun(path, result.overlay.name, result, result.findings, objects=len(result.objects))
    return ClusterRun(path, result.overlay.name, None, result.findings, objects=len(result.objects),
                      kept=keep(result))


# A worker is worth its fork only with a few dozen clusters to render (a render is ~3 ms).
_PER_WORKER = 32
_CHUNK = 16
_WORK: tuple[Options, Keep | None] | None = None  # set in the parent before the fork; workers inherit it


def _work(paths: list[Path]) -> list[ClusterRun]:
    assert _WORK is not None
    options, keep = _WORK
    return run_chunk(paths, options, keep)


def _parallel(paths: list[Path], options: Options, keep: Keep | None, jobs: int) -> Iterator[ClusterRun]:
    """``run_cluster`` over ``paths`` in ``jobs`` forked workers, yielded in path order."""
    import multiprocessing

    global _WORK
    _WORK = (options, keep)
    # Chunks of at most 16 clusters, and at least 8 per worker: few round trips, and the last chunk leaves
    # a worker idle for a few dozen milliseconds at most (with the real chart, a helm batch at least).
    chunks = _chunks(paths, options, max(1, min(_CHUNK, len(paths) // (jobs * 8) or 1)))
    try:
        with multiprocessing.get_context("fork").Pool(jobs, initializer=batch.unwind_on_terminate) as pool:
            for done in pool.imap(_work, chunks):
                yield from done
    finally:
        _WORK = None


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def jobs_for(asked: int) -> int:
    """``--jobs``: 0 (the default) is the cores available, else the number asked for."""
    return asked if asked > 0 else default_jobs()


def default_jobs() -> int:
    """The cores this process may use (its CPU affinity, as ``nproc`` counts them)."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def render_unrefused(path: Path, options: Options) -> RenderResult:
    """Every stage for one cluster; input errors raise, findings are kept on the result."""
    result = _emitted(path, options)
    check_stage(result, options)
    return result


def _emitted(path: Path, options: Options) -> RenderResult:
    """Load, resolve and emit (every stage before the check); input errors raise."""
    refuse_tree(path)
    overlay = load_overlay(path, options.root, extra_vars=options.extra_vars)
    return emit(resolve(overlay, _variants(options)))


def check_stage(result: RenderResult, options: Options) -> None:
    """Stage 4: the output schemas, the reference rules, the Flux delivery checks (``check``) and the
    platform chart's own verdict (``--chart helm``), onto ``result.findings``, sorted."""
    from renderer.check.rules import run_rules
    from renderer.check.schemas import check_objects

    # output schemas (renderer.check.schemas): kubeconform-compatible, offline
    result.findings.extend(check_objects(result, kubernetes_version=options.kubernetes_version,
                                         validator=options.validator))
    view = None
    if options.chart is not None and options.chart.mode == "helm":
        # the real chart is the one answer to "what does the platform render" for every rule
        from renderer.effective.chart_check import platform_view

        view = platform_view(result, helm=options.chart.helm)
        result.findings.extend(view.findings)
    result.findings.extend(run_rules(result, platform=view))
    if options.flux:
        from renderer.output import flux

        result.findings.extend(flux.check(result))
    result.findings[:] = sorted_findings(result.findings)


def render(path: Path, *, variants: Path | None = None, root: Path | None = None,
           extra_vars: dict[str, str] | None = None, kubernetes_version: str | None = None,
           validator: str = "auto", refuse: bool = True) -> RenderResult:
    """One cluster through every stage (``run``'s one-cluster form, for callers that need the result).

    With ``refuse`` (the default), raises RenderError when an error-severity finding remains.
    """
    options = Options(variants, root, extra_vars, kubernetes_version, validator, refuse=refuse)
    result = render_unrefused(path, options)
    if refuse and failing(result.findings, False):
        raise RenderError(result.findings)
    return result


def cluster_paths(path: Path, all_clusters: bool) -> list[Path]:
    """PATH itself, or with ``--all`` every ``clusters/*/cluster.yaml`` folder of the tree at PATH.

    The fleet is listed through ``renderer.walk`` (issue 34 item 1): a ``clusters`` folder or a cluster
    folder that is a link out of PATH, a link loop, or anything but a file or folder there is refused
    (OVL-PATH, naming the link), before any cluster is read, so no file outside the tree is read as a
    cluster's overlay."""
    if not all_clusters:
        return [path]
    import os

    from renderer import walk

    try:
        holder = walk.entries(path, keep=lambda name: name == "clusters")
        clusters = path / "clusters" if holder and holder[0].is_dir else path
        found = [Path(e.path) for e in walk.entries(clusters, top=path)
                 if e.is_dir and os.path.lexists(os.path.join(e.real, "cluster.yaml"))]
    except walk.WalkRefused as refused:
        from renderer.load.yamlio import display_path

        raise RenderError([Finding("OVL-PATH", f"--all: this entry {refused.message}",
                                   Location(display_path(path / refused.rel)))]) from None
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
