"""Fleet runs a person can watch: ``render --all`` and ``check --all`` with a terminal on stderr.

On a terminal the clusters are rendered under Click's progress bar, identical warnings across
clusters are printed once with a count and the first few cluster names (``-v``: every line), and a
summary line ends the run (clusters, objects, errors, warnings, time). Without a terminal on stderr
nothing changes: the command bodies call the same pipeline functions they always did, so a pipe or
a CI log gets exactly the output it got before. stdout never carries any of this.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from renderer.emit import RenderResult
from renderer.errors import ERROR, WARNING, Finding, RenderError

NAMES_SHOWN = 3


def watching(stream: TextIO | None = None) -> bool:
    """A person is watching: stderr is a terminal."""
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def run(paths: list[Path], render_one: Callable[[Path], RenderResult], label: str = "rendering",
        ) -> tuple[list[RenderResult], list[Finding], list[tuple[str, Finding]], float]:
    """Render every path under a progress bar on stderr; failures are collected, not raised.

    Returns (results, failures, every finding tagged with its cluster, seconds)."""
    import click

    from renderer import batch

    started = time.monotonic()
    results: list[RenderResult] = []
    failures: list[Finding] = []
    tagged: list[tuple[str, Finding]] = []
    with click.progressbar(paths, label=label, file=sys.stderr, show_pos=True,
                           item_show_func=lambda p: p.name if p else None) as bar:
        for path in batch.clusters(bar):  # the collector paused between clusters (renderer.batch)
            try:
                result = render_one(path)
            except RenderError as exc:
                failures.extend(exc.findings)
                tagged += [(path.name, f) for f in exc.findings]
                continue
            results.append(result)
            tagged += [(result.overlay.name, f) for f in result.findings]
    return results, failures, tagged, time.monotonic() - started


def grouped_text(tagged: list[tuple[str, Finding]], verbose: bool = False) -> str:
    """Finding lines; a warning several clusters share is one line with a count and names."""
    if verbose:
        return "".join(f.format() + "\n" for _, f in tagged)
    # A repeated warning is shown at its first copy's location: the same line when it is in a shared
    # base, the first cluster's file when each cluster has its own.
    first: dict[tuple[str, str], Any] = {}
    for _, finding in tagged:
        if finding.severity == WARNING:
            first.setdefault((finding.code, finding.message), finding.location)
    clusters: dict[Finding, list[str]] = {}
    for name, finding in tagged:
        key = finding if finding.severity != WARNING else \
            finding._replace(location=first[finding.code, finding.message])
        names = clusters.setdefault(key, [])
        if name not in names:
            names.append(name)
    lines = []
    for finding, names in clusters.items():
        line = finding.format()
        if finding.severity == WARNING and len(names) > 1:
            shown = ", ".join(names[:NAMES_SHOWN]) + (", ..." if len(names) > NAMES_SHOWN else "")
            line += f"  [{len(names)} clusters: {shown}; -v prints each]"
        lines.append(line + "\n")
    return "".join(lines)


def summary(results: list[RenderResult], tagged: list[tuple[str, Finding]], clusters: int, seconds: float) -> str:
    objects = sum(len(r.objects) for r in results)
    errors = sum(1 for _, f in tagged if f.severity == ERROR)
    warnings = sum(1 for _, f in tagged if f.severity == WARNING)
    return (f"{clusters} clusters, {objects} objects, {errors} error{'s' * (errors != 1)}, "
            f"{warnings} warning{'s' * (warnings != 1)} in {seconds:.1f}s\n")


def render_watched(paths: list[Path], *, strict: bool, verbose: bool, **options: Any) -> list[RenderResult]:
    """``render --all`` on a terminal: what ``render_reporting_warnings`` does, watched."""
    from renderer import pipeline

    results, failures, tagged, seconds = run(paths, lambda p: pipeline.render(p, **options))
    sys.stderr.write(grouped_text(tagged, verbose))
    sys.stderr.write(summary(results, tagged, len(paths), seconds))
    warned = any(f.severity == WARNING for _, f in tagged)
    if failures or (strict and warned):
        raise RenderError([])  # every finding is printed above
    return results


def check_watched(paths: list[Path], *, fmt: str, verbose: bool, **options: Any) -> list[Finding]:
    """``check --all`` on a terminal: every finding (the Flux checks' too), text findings grouped, then
    the summary."""
    from renderer import pipeline
    from renderer.output import flux

    def check_one(path: Path) -> RenderResult:
        result = pipeline.render(path, refuse=False, **options)
        result.findings.extend(flux.check(result))
        return result

    results, _, tagged, seconds = run(paths, check_one, label="checking")
    findings = pipeline.sorted_findings([f for _, f in tagged])
    if fmt == "text":
        order = {f: i for i, f in enumerate(findings)}
        sys.stderr.write(grouped_text(sorted(tagged, key=lambda t: order.get(t[1], 0)), verbose))
    else:
        from renderer import report

        report.write(findings, fmt)
    sys.stderr.write(summary(results, tagged, len(paths), seconds))
    return findings
