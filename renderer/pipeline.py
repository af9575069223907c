"""The pipeline: load -> merge -> resolve -> emit -> check, for one cluster or a whole tree.

``run(path, options)`` is the one place a run is composed: ``--all`` discovery, the stages for each
cluster, refusal, ``--strict``, sorting, and the exit class. Every command calls it, for one cluster
or a fleet; a caller that needs one cluster's render takes ``Run.one()``, which refuses exactly as
``Run.exit_code`` decides. What differs between a terminal and a pipe is only how the caller presents
the ``Run`` it gets back (progress comes through an observer ``run`` calls once per cluster).

Stages: ``renderer.load.overlay`` loads and merges the layers, ``renderer.resolve`` turns the merged
overlay and the variant data into a plan, ``renderer.emit`` writes the objects, and
``renderer.check.check`` judges them. ``renderer.output`` serialises the result. Never prints or
exits.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import itertools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from renderer import batch
from renderer.check import check
from renderer.emit import RenderResult, emit
from renderer.errors import (
    ERROR,
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    WARNING,
    Finding,
    Location,
    RenderError,
    sorted_findings,
)
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
    platform_chart: Path | None = None  # --platform-chart DIR: it answers any platform.version (no PLT-VERSION)
    shard: Any = None  # --shard K/N (``renderer.shard.Shard``): with --all, only this part of the fleet


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

    def one(self) -> RenderResult:
        """The render of a one-cluster run. Refused (RenderError with the run's exit code) when the
        input was, or, for a rendering run (``refuse``), when ``exit_code`` fails it: the one refusal rule."""
        (cluster,) = self.clusters
        if cluster.result is None or (self.options.refuse and self.exit_code != EXIT_OK):
            raise RenderError(self.failures(), self.exit_code)
        return cluster.result


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
    options = options or Options()
    paths = cluster_paths(path, all_clusters)
    if options.shard is not None:  # an empty shard is a run of no clusters, not an error
        from renderer import shard

        paths = shard.select(paths, options.shard)
    # Every cluster of one run reads the same shipped files and --variants folder: they are read (and
    # the shipped ones checked against the bundle) once per run, not once per cluster.
    work = Work(options, keep, _shared_variants(options) if len(paths) > 1 else None)
    clusters = []
    jobs = min(options.jobs, len(paths) // _PER_WORKER) if keep is not None and _can_fork() else 1
    if jobs > 1 and _helm(options) is None:
        # The first cluster here: the imports, compiled validators, chart model and shared layers it
        # loads are then inherited by every worker instead of being loaded again in each. (With the
        # real chart the first chunk's helm batch is the workers' own: nothing is rendered twice.)
        done: Iterable[ClusterRun] = itertools.chain([run_cluster(paths[0], work)],
                                                     _parallel(paths[1:], work, jobs))
    elif jobs > 1:
        done = _parallel(paths, work, jobs)
    else:
        done = _serial(paths, work)
    for cluster in done:
        clusters.append(cluster)
        if observer is not None:
            observer(cluster)
    return Run(clusters, options)


class Work(NamedTuple):
    """What every cluster of one run shares: how to render and judge it, what to keep of it, and the
    variant data read once for the run (None: each cluster reads its own, as a one-cluster run does)."""

    options: Options
    keep: Keep | None = None
    variants: Variants | None = None

    def variant_data(self) -> Variants:
        return self.variants if self.variants is not None else Variants(self.options.variants)


def _shared_variants(options: Options) -> Variants | None:
    try:
        return Variants(options.variants)
    except RenderError:
        return None  # a broken --variants folder: every cluster reports it, as when each reads it


def _serial(paths: list[Path], work: Work) -> Iterator[ClusterRun]:
    if _helm(work.options) is None:
        yield from (run_cluster(p, work) for p in batch.clusters(paths))  # the collector paused between
        return
    for chunk in _chunks(paths, work.options):
        yield from run_chunk(chunk, work)


def _helm(options: Options) -> str | None:
    chart = options.chart
    return chart.helm if chart is not None and chart.mode == "helm" else None


def _chunks(paths: list[Path], options: Options, size: int = 1) -> list[list[Path]]:
    """``paths`` in pieces of ``size``; with the real chart, of at least a helm batch."""
    if _helm(options) is not None:
        from renderer.effective.helm import BATCH

        size = max(size, BATCH)
    return [paths[i:i + size] for i in range(0, len(paths), size)]


def run_chunk(paths: list[Path], work: Work) -> list[ClusterRun]:
    """``run_cluster`` over ``paths``, in order. When the real chart judges them (``--chart helm``),
    every cluster is emitted first, then their platform charts are rendered in one go, many clusters to
    a helm process (``chart_check.prefetch``), then each is checked: no cluster is rendered twice."""
    helm = _helm(work.options)
    if helm is None or len(paths) < 2:
        return [run_cluster(p, work) for p in batch.clusters(paths)]
    from renderer.effective.chart_check import prefetch

    staged: list[RenderResult | RenderError] = []
    for cluster_path in batch.clusters(paths):  # the collector paused between
        try:
            staged.append(_emitted(cluster_path, work))
        except RenderError as exc:
            staged.append(exc)  # refused before a chart render: reported below
    prefetch(helm, [r for r in staged if not isinstance(r, RenderError)], chart=work.options.platform_chart)
    return [run_cluster(p, work, r) for p, r in batch.clusters(zip(paths, staged, strict=True))]


def run_cluster(path: Path, work: Work, emitted: RenderResult | RenderError | None = None) -> ClusterRun:
    """Every stage for one cluster: its render, or its refusal, as a ``ClusterRun``."""
    try:
        if isinstance(emitted, RenderError):
            raise emitted
        result = emitted if emitted is not None else _emitted(path, work)
        check(result, work.options, _chart_view(result, work.options))
        kept = work.keep(result) if work.keep is not None else None
    except RenderError as exc:
        return ClusterRun(path, path.name, None, sorted_findings(exc.findings), exc.exit_code)
    if work.keep is None:
        return ClusterRun(path, result.overlay.name, result, result.findings, objects=len(result.objects))
    return ClusterRun(path, result.overlay.name, None, result.findings, objects=len(result.objects), kept=kept)


# A worker is worth its fork only with a few dozen clusters to render (a render is ~3 ms).
_PER_WORKER = 32
_CHUNK = 16


def _parallel(paths: list[Path], work: Work, jobs: int) -> Iterator[ClusterRun]:
    """``run_cluster`` over ``paths`` in ``jobs`` forked workers, yielded in path order."""
    import multiprocessing

    # Chunks of at most 16 clusters, and at least 8 per worker: few round trips, and the last chunk leaves
    # a worker idle for a few dozen milliseconds at most (with the real chart, a helm batch at least).
    chunks = _chunks(paths, work.options, max(1, min(_CHUNK, len(paths) // (jobs * 8) or 1)))
    # The run's Work reaches each worker through the pool's initializer: a forked worker inherits it
    # without pickling (``keep`` may be a closure), and the parent holds no run state in a global.
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_start_worker, initargs=(work,)) as pool:
        for done in pool.imap(_work_chunk, chunks):
            yield from done


_worker_work: list[Work] = []  # in a fleet's worker process only: the Work its pool was started with


def _start_worker(work: Work) -> None:
    batch.unwind_on_terminate()
    _worker_work[:] = [work]


def _work_chunk(paths: list[Path]) -> list[ClusterRun]:
    return run_chunk(paths, _worker_work[0])


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


def _chart_view(result: RenderResult, options: Options) -> Any:
    """What the real chart renders for ``result`` (``--chart helm``), for the check; None: the model."""
    helm = _helm(options)
    if helm is None:
        return None
    from renderer.effective.chart_check import platform_view

    return platform_view(result, helm=helm, chart=options.platform_chart)


def _emitted(path: Path, work: Work) -> RenderResult:
    """Load, resolve and emit (every stage before the check); input errors raise."""
    refuse_tree(path)
    overlay = load_overlay(path, work.options.root, extra_vars=work.options.extra_vars)
    return emit(resolve(overlay, work.variant_data()))


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
