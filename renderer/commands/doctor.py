"""``cozy-render doctor PATH [--all]``: render each cluster, learn its GPU route, read the live
cluster (read-only) and report every documented failure with its fix.

Same client, contexts, timeouts and exit conventions as ``diff``: 0 the route is healthy (warnings
allowed), 1 a documented failure was found, >1 the cluster could not be read or is another cluster's
(3: DIFF-LIVE, DIFF-TIMEOUT, DIFF-CLIENT, DIFF-CONTEXT) or bad usage (2). Every report names the
context and API server it read; every finding and error names its cluster.
With ``--all`` clusters are read at most ``--concurrency`` at a time; one deadline (``--timeout``, from
the command's start) covers the render and every cluster, as diff's does.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from renderer import report as reporting
from renderer import shard
from renderer import shard_report as sharded
from renderer.diff import install_hint  # diff's: the command that works in this install
from renderer.diff.live import connect
from renderer.doctor import report
from renderer.doctor.checks import diagnose
from renderer.doctor.live import LiveState, read_state
from renderer.doctor.route import NONE, route_of
from renderer.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, EXIT_USAGE, Finding, RenderError
from renderer.fanout import Deadline, Job, fan_out
from renderer.pipeline import Options
from renderer.pipeline import run as run_pipeline
from renderer.requests import DoctorRequest


def run(request: DoctorRequest, stdout: TextIO | None = None) -> int:
    """Findings go to stdout (they are the result); clusters that cannot be read raise RenderError,
    which the runner prints on stderr."""
    out = stdout or sys.stdout
    _check_usage(request)

    part = shard.requested(request.shard, request.all_clusters)
    _require_client()

    deadline = Deadline.for_command(request.timeout)  # as diff's: the render, every cluster and request
    rendered = _render(request, part, out)
    jobs = [_job(request, result, deadline) for result in rendered.results]
    outcomes, failures = _run_bounded(request, jobs, deadline)
    findings = [f for _, f in failures]
    if part is not None and request.output == "json":  # a shard's report for `merge`, whatever it holds
        _show_shard(request, part, rendered, (outcomes, failures), out)
    elif failures and not outcomes:
        raise RenderError(findings, EXIT_INPUT)  # nothing was read: nothing on stdout
    else:
        reporting.show("doctor", request.output, (outcomes, failures), reporting.Streams(out, sys.stderr))
    out.flush()
    if failures:
        raise RenderError(findings, EXIT_INPUT)
    return EXIT_FINDINGS if any(o.errors for o in outcomes) else EXIT_OK


def _check_usage(request: DoctorRequest) -> None:
    problems = []
    if request.all_clusters and request.context is not None:
        problems.append("--all reads each cluster through its own context (live.context, or the cluster's name); "
                        "--context is for one cluster")
    if request.concurrency < 1:
        problems.append("--concurrency must be at least 1")
    if request.timeout <= 0:
        problems.append("--timeout must be positive")
    if request.output not in ("text", "json"):
        problems.append(f"-o {request.output}: text or json")
    if problems:
        raise RenderError([Finding("DIFF-USAGE", p) for p in problems], EXIT_USAGE)


def _require_client() -> None:
    import importlib.util

    if importlib.util.find_spec("kubernetes") is None:
        raise RenderError([Finding("DIFF-CLIENT", f"doctor needs the kubernetes client: {install_hint()}")],
                          EXIT_INPUT)


def _render(request: DoctorRequest, part: Any = None, out: TextIO | None = None) -> Any:
    # the render's own warnings are check's to report; doctor reports the live cluster
    done = run_pipeline(request.path, Options(request.variants, request.root, shard=part),
                        all_clusters=request.all_clusters)
    if done.exit_code:
        if part is not None and request.output == "json":
            _show_shard(request, part, done, ([], []), out or sys.stdout)
        raise RenderError(done.failures(), done.exit_code)
    return done


def _show_shard(request: DoctorRequest, part: Any, rendered: Any, payload: Any, out: TextIO) -> None:
    """The shard's JSON report, with what its render said: one run stops at a refused render, and then
    prints every cluster's render findings, so ``merge`` needs them from every shard."""
    section = sharded.section(part, "doctor", request, [(c.path, c.name) for c in rendered.clusters],
                              ignored=("kubeconfig", "timeout"))
    section["render"] = {"exitCode": rendered.exit_code,
                         "findings": [{"cluster": name, **f.as_dict()} for name, f in rendered.tagged()]}
    sharded.show_json("doctor", payload, section, out)


def _job(request: DoctorRequest, result: Any, deadline: Any) -> Job:
    name = result.overlay.name
    route = route_of(result)
    if route.name == NONE:
        # No GPU route: nothing to check, so no connection (an --all tree need not have a context
        # for every cluster without GPUs).
        return Job(name, lambda: _nothing_to_check(name, route))
    context = request.context or result.overlay.get("live", "context")
    return Job(name, lambda: _doctor_cluster(request, name, route, context, deadline))


def _nothing_to_check(cluster: str, route: Any) -> Any:
    return report.outcome(cluster, route, LiveState({}, [], [], [], [], [], {}, []), [])


def _doctor_cluster(request: DoctorRequest, cluster: str, route: Any, context: str | None, deadline: Any) -> Any:
    # diff's connection: the same kubeconfig and context choice, deadline and retries.
    source = connect(cluster, request.kubeconfig, context, deadline, fleet=request.all_clusters)
    try:
        state = read_state(source, route, cluster)
        # every run names what it read (issue 32 item 2): the context and the API server, shown
        # without userinfo or query (diff's shown_url)
        read = {"context": source.context or "", "server": source.shown}
        return report.outcome(cluster, route, state, diagnose(route, state), read)
    finally:
        source.close()


def _run_bounded(request: DoctorRequest, jobs: list[Job], deadline: Any) -> \
        tuple[list[Any], list[tuple[str, Finding]]]:
    """Every cluster's outcome, and each failure with its cluster, in cluster order (``renderer.fanout``:
    at most ``--concurrency`` at once, under the run's one deadline)."""
    done = fan_out(jobs, request.concurrency, deadline)
    return [d.value for d in done if not d.failures], [(d.name, f) for d in done for f in d.failures]


@reporting.reporter("doctor", "json")
def _json(payload: tuple[list[Any], list[tuple[str, Finding]]], streams: reporting.Streams) -> None:
    streams.stdout.write(report.as_json(*payload))


@reporting.reporter("doctor", "text")
def _text(payload: tuple[list[Any], list[tuple[str, Finding]]], streams: reporting.Streams) -> None:
    report.write_text(payload[0], streams.stdout)

