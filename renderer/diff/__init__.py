"""``cozy-render diff``: what a sync of the render would change on the live cluster.

Entry: ``run(DiffRequest(...)) -> exit code``. The Click command only builds the request. Nothing of
this package is imported by ``render`` or ``cmp generate``. Only a live read needs the ``[live]``
extra (the ``kubernetes`` client, imported inside the functions that talk to a cluster); ``--snapshot``
and ``--against`` run on the base install (PyYAML's libyaml loader when installed, else ruamel.yaml's).

Exit codes follow ``kubectl diff``: 0 no differences, 1 differences, >1 an error (3: input, live
state or a PLT-11 patch target missing; 2: usage).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from renderer import formats, walk
from renderer.check.flux import disable_substitution
from renderer.diff import compare, report
from renderer.diff.compare import is_package, key_of, parse_ignore
from renderer.diff.live import SnapshotSource, connect, load_snapshot
from renderer.effective.packages import CO_MANAGED, effective_packages
from renderer.errors import (
    ERROR,
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    WARNING,
    Finding,
    Location,
    RenderError,
)
from renderer.escape import printable
from renderer.fanout import Deadline, Job, fan_out
from renderer.load.yamlio import display_path
from renderer.model import OWNERSHIP_ANNOTATION
from renderer.pipeline import Options
from renderer.pipeline import run as run_pipeline
from renderer.requests import DiffRequest


def run(request: DiffRequest, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    _check_usage(request)
    if request.snapshot is None and request.against is None:
        _require_client()

    # One deadline for the whole diff: start-up, render, every cluster and request.
    deadline = Deadline.for_command(request.timeout)
    clusters = _render(request)
    jobs = [_job(request, result) for result in clusters]
    outcomes, failures = _run_jobs(request, jobs, err, deadline)
    if failures and not outcomes:
        raise RenderError(failures, EXIT_INPUT)  # nothing was read: nothing on stdout
    findings = [f for o in outcomes for f in o.findings]
    shown = formats.show("diff", request.output, report.DiffReport(outcomes, findings + failures, request.color,
                                                                   len(jobs) > 1), formats.Streams(out, err))
    out.flush()
    different = any(o.different for o in outcomes) or bool(shown)  # shown: KUBECTL_EXTERNAL_DIFF's verdict
    for outcome in outcomes:  # the context a live diff used, every time (issue 18 item 7)
        if outcome.source:
            err.write(printable(f"diff: {outcome.cluster}: compared with {outcome.source}") + "\n")
    for f in findings:
        err.write(f.format() + "\n")
    if failures:
        raise RenderError(failures, EXIT_INPUT)
    if any(f.severity == ERROR for f in findings):
        return EXIT_INPUT
    if different and not request.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def _check_usage(request: DiffRequest) -> None:
    problems = []
    if request.snapshot is not None and request.against is not None:
        problems.append("--snapshot and --against are two different live sources; give one")
    offline = request.snapshot is not None or request.against is not None
    if offline and request.server_side:
        problems.append("--server-side asks the API server; it cannot be used with --snapshot or --against")
    if offline and (request.kubeconfig is not None or request.context is not None):
        problems.append("--kubeconfig/--context select a cluster; they cannot be used with --snapshot or --against")
    if request.all_clusters and request.context is not None:
        problems.append("--all diffs each cluster against its own context (live.context, or the cluster's name); "
                        "--context is for one cluster")
    if request.against is not None and request.effective:
        problems.append("--effective compares with the live Packages; a rendered folder has only cozy-render's")
    if (request.helm is not None or request.platform_chart is not None) and not request.effective:
        problems.append("--helm and --platform-chart choose the chart --effective renders; give --effective")
    if request.delivery not in ("argocd", "flux"):
        problems.append(f"--delivery must be argocd or flux, not {request.delivery!r}")
    if request.concurrency < 1:
        problems.append("--concurrency must be at least 1")
    if request.timeout <= 0:
        problems.append("--timeout must be positive")
    if problems:
        raise RenderError([Finding("DIFF-USAGE", p) for p in problems], EXIT_USAGE)


def _require_client() -> None:
    import importlib.util

    if importlib.util.find_spec("kubernetes") is None:
        raise RenderError([Finding("DIFF-CLIENT", "diff against a cluster needs the Kubernetes client: "
                                   f"{install_hint()} (--snapshot and --against work without it)")], EXIT_INPUT)


def install_hint() -> str:
    """How to add the client to the install this process runs from (cozy-render is not on PyPI, so
    ``pip install 'cozy-render[live]'`` would fetch nothing): the checkout's own extra when run from a
    source tree, else the requirement itself into this interpreter."""
    import sys

    checkout = Path(__file__).resolve().parents[2]
    python = sys.executable or "python3"
    if (checkout / "pyproject.toml").is_file() and (checkout / "renderer" / "diff").is_dir():
        return f"{python} -m pip install '{checkout}[live]'"
    return f"{python} -m pip install 'kubernetes>=37'"


def _render(request: DiffRequest) -> list[Any]:
    """Every cluster's render through the one composer (``pipeline.run``); refused, with every
    cluster's findings, when any cluster is."""
    options = Options(request.variants, request.root, kubernetes_version=request.kubernetes_version)
    done = run_pipeline(request.path, options, all_clusters=request.all_clusters)
    if done.exit_code:
        raise RenderError(done.failures(), done.exit_code)
    return done.results


def desired_objects(result: Any, request: DiffRequest) -> list[dict[str, Any]]:
    """The objects a sync would apply, in render order, as the chosen delivery applies them
    (``--delivery flux``: with ``render --out``'s substitute mark).

    With ``--effective``, the Packages are the effective set (``renderer.effective.packages``): every
    Package the real platform chart emits for the rendered values, with cozy-render's patches merged
    over them as server-side apply would. A co-managed Package is then compared whole, so a hand
    edit of a platform-owned field shows as drift (the platform release would revert it).
    """
    if request.delivery == "flux":
        # What Flux applies is `render --out`'s folder: objects holding ${ carry the substitute mark.
        return disable_substitution(_desired_objects(result, request))
    return _desired_objects(result, request)


def _desired_objects(result: Any, request: DiffRequest) -> list[dict[str, Any]]:
    if not request.effective:
        return [e.obj for e in result.objects]

    packages = effective_packages(result, request.helm, request.platform_chart)
    others = [e.obj for e in result.objects if not e.is_package()]
    desired = []
    for p in packages:
        obj = p.obj
        if p.origin == CO_MANAGED:
            # The merged object is the platform's plus ours: compare all of it, not just our fields.
            meta = dict(obj.get("metadata") or {})
            meta["annotations"] = {**(meta.get("annotations") or {}), OWNERSHIP_ANNOTATION: EFFECTIVE_OWNERSHIP}
            obj = {**obj, "metadata": meta}
        desired.append(obj)
    return others + desired


# The ownership value --effective gives a co-managed Package (patch merged over the platform's
# object): it is compared whole; the live copy still says `patch`, which is not drift.
EFFECTIVE_OWNERSHIP = "co-managed"


def platform_released(live: list[dict[str, Any]], desired: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Live Packages the platform release installed (Helm's release annotation) that the effective
    set no longer has: keep-policy leftovers (PLT-09) and Packages the chart stopped emitting."""
    wanted = {key_of(o) for o in desired}
    return [o for o in live if is_package(o) and key_of(o) not in wanted
            and ((o.get("metadata") or {}).get("annotations") or {}).get(RELEASE_ANNOTATION) == PLATFORM_RELEASE]


RELEASE_ANNOTATION = "meta.helm.sh/release-name"
PLATFORM_RELEASE = "cozystack-platform"


class _Job(NamedTuple):
    cluster: str
    desired: list[dict[str, Any]]
    ignores: list[Any]
    source: Any  # a callable returning the live-state source (opened inside the job)
    content_only: bool
    patch_notes: dict[str, tuple[str, str]]  # Package name -> (PLT-11 message, severity) if absent live


def _job(request: DiffRequest, result: Any) -> _Job:
    name = result.overlay.name
    ignores = [parse_ignore(text, "--ignore") for text in request.ignore]
    overlay_ignores = result.overlay.get("diff", "ignore") or []
    ignores += [parse_ignore(str(text), "diff.ignore", result.overlay.locate(("diff", "ignore", i)))
                for i, text in enumerate(overlay_ignores)]
    desired = desired_objects(result, request)
    for obj in desired:  # --effective: a co-managed Package's live copy says `patch`; that is not drift
        if ((obj.get("metadata") or {}).get("annotations") or {}).get(OWNERSHIP_ANNOTATION) == EFFECTIVE_OWNERSHIP:
            pointer = "/metadata/annotations/" + OWNERSHIP_ANNOTATION.replace("~", "~0").replace("/", "~1")
            ignores.append(parse_ignore(f"Package/{obj['metadata']['name']}:{pointer}", "--effective"))
    if request.snapshot is not None or request.against is not None:
        folder = request.snapshot if request.snapshot is not None else request.against
        assert folder is not None
        against = request.against is not None
        return _Job(name, desired, ignores,
                    lambda _deadline: _offline_source(folder, name, request.all_clusters, against),
                    against, compare.patch_target_notes(result))
    context = request.context or result.overlay.get("live", "context")
    return _Job(name, desired, ignores, lambda deadline: _connect(request, name, context, deadline), False,
                compare.patch_target_notes(result))


def _offline_source(folder: Path, cluster: str, per_cluster: bool, against: bool) -> Any:
    path = folder
    flag = "--against" if against else "--snapshot"
    if per_cluster:
        # The cluster's entry is listed through renderer.walk (issue 34 item 1): the folder named on the
        # command line may be a link, the entry in it may not leave it (nor loop, nor be a FIFO).
        names = [cluster] + [f"{cluster}{s}" for s in (".yaml", ".yml", ".json")]
        try:
            found = sorted(walk.entries(folder, keep=names.__contains__), key=lambda e: names.index(e.name))
        except walk.WalkRefused as refused:
            raise RenderError([Finding("DIFF-SNAPSHOT", f"{flag}: this entry {refused.message}; it is never read",
                                       Location(display_path(folder / refused.rel)))], EXIT_INPUT) from None
        if not found:
            raise RenderError([Finding("DIFF-SNAPSHOT", f"{flag} {folder}: nothing for cluster {cluster} "
                                       f"(expected {cluster}/ or {cluster}.yaml there)")], EXIT_INPUT)
        path = Path(found[0].real)
    return SnapshotSource(load_snapshot(path, against=against), f"{'--against' if against else '--snapshot'} {path}")


def _connect(request: DiffRequest, cluster: str, context: str | None, deadline: Any) -> Any:
    return connect(cluster, request.kubeconfig, context, deadline, fleet=request.all_clusters,
                   field_manager=request.field_manager)


def _diff_cluster(request: DiffRequest, job: _Job, deadline: Any = None) -> Any:
    source = job.source(deadline)
    try:
        live, labelled = source.fetch(job.desired, job.cluster)
        released = platform_released(source.packages(), job.desired) if request.effective else []
        targets = []
        for obj in job.desired:
            current = live.get(compare.key_of(obj))
            compare_to = obj
            if request.server_side and not (compare.is_patch(obj) and current is None) \
                    and compare.skip_reason(obj, current, live_exists=current is not None) is None:
                compare_to = source.dry_run_apply(obj)
            targets.append(compare.Desired(obj, compare_to))
        outcome = compare.compare_cluster(job.cluster, targets, live, labelled, job.ignores,
                                          show_secrets=request.show_secrets, content_only=job.content_only,
                                          released=released, patch_notes=job.patch_notes)
        for why in getattr(source, "skipped", []):
            outcome.findings.append(Finding("DIFF-ORPHANS", f"{job.cluster}: orphans not searched: {why}",
                                            None, WARNING))
        return outcome._replace(source=_describe(source)) if hasattr(source, "where") else outcome
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


def _describe(source: Any) -> str:
    """What the cluster was read from, for the context line on stderr."""
    where = getattr(source, "where", None)
    host = getattr(source, "host", None)
    if where is not None:
        return f"{where} ({host})" if host else str(where)
    return str(getattr(source, "origin", "a snapshot"))


def _run_jobs(request: DiffRequest, jobs: list[_Job], err: TextIO, deadline: Any = None) -> \
        tuple[list[Any], list[Finding]]:
    """Every cluster's outcome and failures, in cluster order. Offline sources are read one after the
    other; live clusters through ``renderer.fanout`` (at most ``--concurrency`` at once, one deadline
    for the whole diff: every cluster, request and retry)."""
    if request.snapshot is not None or request.against is not None:
        outcomes, failures = [], []
        for job in jobs:
            try:
                outcomes.append(_diff_cluster(request, job))
            except RenderError as exc:
                failures.extend(exc.findings)
        return outcomes, failures
    deadline = deadline if deadline is not None else Deadline(request.timeout)
    progress = _Progress(err, len(jobs))
    try:
        done = fan_out([Job(job.cluster, functools.partial(_diff_cluster, request, job, deadline)) for job in jobs],
                       request.concurrency, deadline, progress.step)
    finally:
        progress.clear()
    return [d.value for d in done if not d.failures], [f for d in done for f in d.failures]


class _Progress:
    """One self-overwriting line on stderr, only when stderr is a terminal."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.count = 0
        self.on = total > 0 and stream.isatty()

    def step(self, cluster: str) -> None:
        self.count += 1
        if self.on:
            self.stream.write(f"\r\x1b[Kdiff: {self.count}/{self.total} clusters read ({cluster})")
            self.stream.flush()

    def clear(self) -> None:
        if self.on:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        self.on = False  # a job still running past the deadline writes nothing after the report
