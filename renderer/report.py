"""How results reach the user: the findings' and the rendered objects' reporters.

The registry itself (``reporter``, ``show``, ``formats``, ``Streams``, and ``FORMATS``, every subject's
formats) is ``renderer.formats``, re-exported here for the command bodies: a command calls
``show(subject, fmt, payload)`` and never chooses a format itself. The core only returns or raises
findings; the reporters print.

Subjects here:

- ``findings``: ``text`` (stderr, one ``file:line:col: severity[CODE]: message`` per distinct
  finding; grouped, with a summary line, when a person watches a fleet), ``json`` and ``github``
  (workflow commands) on stdout, where CI reads them. The payload is a ``FindingsReport``.
- ``objects``: ``yaml`` (a stream) and ``json`` (a ``v1`` List) on stdout.
- ``fleet``: ``render --all`` on stdout, every object marked with its cluster (``render.fleet_stream``).
- ``annotated``: ``render --annotate``, every value with where it came from.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import os
import sys
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from renderer.errors import ERROR, WARNING, Finding, strict_labelled  # noqa: F401 - the commands read it here
from renderer.formats import FORMATS, Streams, formats, reporter, show, shown  # noqa: F401 - the commands'
from renderer.model import JSON_API_VERSION  # the commands read it here too

# --- findings ----------------------------------------------------------------------------------------


class FindingsReport(NamedTuple):
    """What a checking command reports: every finding tagged with its cluster, and how it was judged.

    ``tagged`` is (cluster name, finding) in cluster order; ``chart`` the platform chart choice
    (``renderer.effective.choice.ChartChoice``) or None for commands that do not judge the chart.
    ``watched``: a person is watching a fleet run (grouped text and a summary line)."""

    tagged: list[tuple[str, Finding]]
    chart: Any = None
    clusters: int = 1
    objects: int = 0
    exit_code: int = 0
    watched: bool = False
    verbose: bool = False
    seconds: float = 0.0

    def distinct(self) -> list[Finding]:
        from renderer.pipeline import sorted_findings

        return sorted_findings([f for _, f in self.tagged])

    def counts(self) -> tuple[int, int]:
        return (sum(f.severity == ERROR for _, f in self.tagged), sum(f.severity == WARNING for _, f in self.tagged))


def text(findings: list[Finding]) -> str:
    return "".join(f.format() + "\n" for f in findings)


def write(findings: list[Finding], fmt: str = "text", stream: TextIO | None = None) -> None:
    """Untagged findings (a refusal, render's warnings) in ``fmt``; ``text`` goes to stderr."""
    streams = Streams(stream or sys.stdout, stream or sys.stderr)
    show("findings", fmt, FindingsReport([("", f) for f in findings]), streams)


@reporter("findings", "text")
def _findings_text(report: FindingsReport, streams: Streams) -> None:
    out = streams.stderr
    if report.chart is not None:
        out.write(f"cozy-render: {report.chart.describe()}\n")
    if not report.watched:
        out.write(text(report.distinct()))
        return
    from renderer.commands import fleet

    order = {f: i for i, f in enumerate(report.distinct())}
    out.write(fleet.grouped_text(sorted(report.tagged, key=lambda t: order.get(t[1], 0)), report.verbose))
    errors, warnings = report.counts()
    out.write(fleet.summary_line(report.clusters, report.objects, errors, warnings, report.seconds))


@reporter("findings", "json")
def _findings_json(report: FindingsReport, streams: Streams) -> None:
    from renderer.pipeline import sorted_findings

    entries: list[dict[str, object]] = []
    clusters: dict[str, list[Finding]] = {}
    for name, finding in report.tagged:
        clusters.setdefault(name, []).append(finding)
    for name, findings in clusters.items():
        entries += [{"cluster": name or None, **f.as_dict()} for f in sorted_findings(findings)]
    errors, warnings = report.counts()
    document: dict[str, object] = {"apiVersion": JSON_API_VERSION, "kind": "Findings"}
    if report.chart is not None:
        document["chart"] = report.chart.as_dict()
    document["summary"] = {"clusters": report.clusters, "errors": errors, "warnings": warnings,
                           "exitCode": report.exit_code}
    document["findings"] = entries
    from renderer.escape import json_text

    streams.stdout.write(json_text(document, indent=2, ensure_ascii=False) + "\n")


@reporter("findings", "github")
def _findings_github(report: FindingsReport, streams: Streams) -> None:
    if report.chart is not None:
        streams.stderr.write(f"cozy-render: {report.chart.describe()}\n")
    for finding in report.distinct():
        streams.stdout.write(github_annotation(finding))


def github_annotation(f: Finding) -> str:
    """A workflow command (``::error file=...,line=...::message``), with the file relative to the
    repository root, which is where GitHub attaches annotations, and the data and property escaping
    of the Actions toolkit (``%``, CR, LF; and ``:`` ``,`` inside properties)."""
    loc = f.location
    level = "error" if f.severity == ERROR else "warning"
    props = []
    if loc:
        props.append(f"file={_property(repository_path(loc.path))}")
        if loc.line:
            props += [f"line={loc.line}", f"col={loc.col}"]
    props.append(f"title={_property(f.code)}")
    return f"::{level} {','.join(props)}::{_data(f.message)}\n"


def _data(value: str) -> str:
    from renderer.escape import github_data  # a message must not forge a command (issue 25 item 10)

    return github_data(value)


def _property(value: str) -> str:
    from renderer.escape import github_property

    return github_property(value)


_ROOTS: dict[str, str | None] = {}


def repository_path(path: str) -> str:
    """``path`` relative to the Git repository holding it (the nearest folder with ``.git``), as
    GitHub names files; unchanged when no repository holds it."""
    absolute = os.path.abspath(path)
    folder = os.path.dirname(absolute)
    if folder not in _ROOTS:
        found = None
        for candidate in (Path(folder), *Path(folder).parents):
            if (candidate / ".git").exists():
                found = str(candidate)
                break
        _ROOTS[folder] = found
    root = _ROOTS[folder]
    return Path(os.path.relpath(absolute, root)).as_posix() if root else path


# --- objects -----------------------------------------------------------------------------------------


@reporter("objects", "yaml")
def _objects_yaml(objects: list[dict[str, Any]], streams: Streams) -> None:
    from renderer import output

    streams.stdout.write(output.to_yaml(objects))


@reporter("objects", "json")
def _objects_json(objects: list[dict[str, Any]], streams: Streams) -> None:
    from renderer import output

    streams.stdout.write(output.to_json(objects))
