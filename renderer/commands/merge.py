"""``cozy-render merge REPORT.json...``: the N shards of a CI matrix back into one report.

Each runner of a matrix ran one command with ``--shard K/N -o json`` (``renderer.shard``); merge
reads their reports, checks that they are the N shards of one run (one command, one output
apiVersion, the same options, every shard once, no cluster twice, each cluster in the shard its path
hashes to), rebuilds the payload that command's reporter takes, and prints it through the same
reporter (``renderer.report.show``), so the bytes and the exit code are those of one run over the
whole fleet. A report that does not fit is one CLI-MERGE line (exit 2), and nothing is printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from renderer import preview, report
from renderer import shard as sharding
from renderer import shard_report as sharded
from renderer.commands import (
    doctor,  # noqa: F401 - registers the doctor reporters
    ls,
)
from renderer.doctor.checks import Diagnosis
from renderer.doctor.report import Outcome
from renderer.doctor.route import Route
from renderer.effective.choice import ChartChoice
from renderer.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, EXIT_USAGE, Finding, Location, RenderError
from renderer.escape import printable
from renderer.load.yamlio import display_path
from renderer.preview import report as review_report
from renderer.preview.objects import ObjectChange
from renderer.preview.platform import PackageChange, PlatformDelta, SideSet
from renderer.preview.review import ClusterReview, InputChange, Prune, Review, VersionChange
from renderer.preview.trees import Side
from renderer.requests import MergeRequest

# What each command's merged report can be printed as (its own -o choices; ls's table is its text).
FORMATS = {"check": ("text", "json", "github"), "render": ("text",), "ls": ("table", "json"),
           "doctor": ("text", "json"), "diff": ("text", "json", "markdown")}
DEFAULT_FORMAT = {"check": "text", "render": "text", "ls": "table", "doctor": "text", "diff": "text"}


# --- merge ------------------------------------------------------------------------------------------

def refused(message: str, where: Location | None = None) -> RenderError:
    return RenderError([Finding("CLI-MERGE", message, where)], EXIT_USAGE)


class Shard:
    """One shard's report: the document and its ``shard`` section."""

    def __init__(self, path: Path, document: dict[str, Any]) -> None:
        self.path = path
        self.document = document
        self.part: dict[str, Any] = document["shard"]

    @property
    def where(self) -> Location:
        return Location(display_path(self.path))


def run(req: MergeRequest) -> int:
    shards = validated([read(path) for path in req.reports])
    command = shards[0].part["command"]
    fmt = req.fmt or DEFAULT_FORMAT[command]
    if fmt == "text" and command == "ls":
        fmt = "table"
    if fmt not in FORMATS[command]:
        raise refused(f"-o {fmt}: the reports are {command}'s, which prints {', '.join(FORMATS[command])}")
    return MERGERS[command](shards, fmt)


def read(path: Path) -> Shard:
    where = Location(display_path(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise refused(f"cannot read the report: {printable(getattr(exc, 'strerror', None) or exc)}", where) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refused(f"not a JSON report: {exc.msg}", Location(where.path, exc.lineno, exc.colno)) from None
    if not isinstance(document, dict) or not isinstance(document.get("shard"), dict):
        raise refused("not the report of a shard: write it with --shard K/N -o json", where)
    part = document["shard"]
    if part.get("command") not in FORMATS or not isinstance(part.get("clusters"), list) \
            or not all(isinstance(part.get(k), int) for k in ("index", "count")):
        raise refused("its shard section is not one cozy-render writes", where)
    return Shard(path, document)


def validated(shards: list[Shard]) -> list[Shard]:
    """The shards in index order, once they are known to be the N shards of one run."""
    first = shards[0]
    for key, what in (("command", "command"), ("count", "shard count"), ("options", "options")):
        for other in shards[1:]:
            if other.part.get(key) != first.part.get(key):
                raise refused(f"another {what} than {first.where}'s: the reports are not the shards of one run",
                              other.where)
    for other in shards[1:]:
        for key in ("apiVersion", "kind", "chart", "base", "head"):
            if other.document.get(key) != first.document.get(key):
                raise refused(f"another {key} than {first.where}'s: the reports are not the shards of one run",
                              other.where)
    count = first.part["count"]
    by_index: dict[int, Shard] = {}
    for one in shards:
        index = one.part["index"]
        if index in by_index:
            raise refused(f"shard {index}/{count} again (also {by_index[index].where})", one.where)
        by_index[index] = one
    missing = [str(i) for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise refused(f"shard{'s' * (len(missing) > 1)} {', '.join(missing)} of {count} missing: merge needs "
                      f"every shard's report")
    owner: dict[str, Shard] = {}
    for index in sorted(by_index):
        one = by_index[index]
        for cluster in one.part["clusters"]:
            path = cluster.get("path") if isinstance(cluster, dict) else None
            if not isinstance(path, str) or not isinstance(cluster.get("name"), str):
                raise refused("its shard section is not one cozy-render writes", one.where)
            if path in owner:
                raise refused(f"cluster {path} is in two reports (also {owner[path].where})", one.where)
            if sharding.shard_of(path, count) != index:
                raise refused(f"cluster {path} belongs to shard {sharding.shard_of(path, count)}/{count}, "
                              f"not {index}/{count}", one.where)
            owner[path] = one
    return [by_index[i] for i in sorted(by_index)]


def clusters(shards: list[Shard]) -> list[dict[str, str]]:
    """Every cluster of the run, in the order one run lists them (by folder: ``pipeline.cluster_paths``)."""
    return sorted((c for s in shards for c in s.part["clusters"]), key=lambda c: c["path"])


# --- check and render: findings --------------------------------------------------------------------


def _finding(entry: dict[str, Any]) -> Finding:
    where = Location(entry["file"], entry.get("line") or 0, entry.get("column") or 0) \
        if entry.get("file") is not None else None
    return Finding(entry["code"], entry["message"], where, entry["severity"])


def findings_report(shards: list[Shard]) -> report.FindingsReport:
    """The payload of the findings reporters: every finding tagged with its cluster, in cluster order."""
    by_cluster: dict[str, list[Finding]] = {}
    for one in shards:
        for entry in one.document.get("findings", []):
            by_cluster.setdefault(entry.get("cluster") or "", []).append(_finding(entry))
    tagged = [(c["name"], f) for c in clusters(shards) for f in by_cluster.pop(c["name"], [])]
    tagged += [(name, f) for name, found in by_cluster.items() for f in found]  # untagged: none with --all
    chart = shards[0].document.get("chart")
    choice = None
    if chart is not None:
        choice = ChartChoice(chart["mode"], chart.get("helm"), chart.get("helmVersion") or "", chart["asked"])
    code = max(int(s.document["summary"]["exitCode"]) for s in shards)
    return report.FindingsReport(tagged, choice, len(clusters(shards)), 0, code)


def _findings(shards: list[Shard], fmt: str) -> int:
    payload = findings_report(shards)
    report.show("findings", fmt, payload)
    return payload.exit_code


def _render(shards: list[Shard], fmt: str) -> int:
    """``render --all --out``'s report: its findings on stderr (a refusal's labelled as it labels them)."""
    payload = findings_report(shards)
    findings = [f for _, f in payload.tagged]
    if payload.exit_code:
        findings = report.strict_labelled(findings, shards[0].part["options"]["strict"])
    report.write(findings)
    return payload.exit_code


# --- ls: rows --------------------------------------------------------------------------------------


def _ls(shards: list[Shard], fmt: str) -> int:
    options = shards[0].part["options"]
    rows = ls.shown([r for s in shards for r in s.document["clusters"]], options["sort"], options["errors_only"])
    report.show("clusters", fmt, rows)
    return EXIT_FINDINGS if options["errors_only"] and rows else EXIT_OK


# --- doctor: outcomes -------------------------------------------------------------------------------


def _in_order(shards: list[Shard], entries: Callable[[Shard], list[Any]]) -> list[Any]:
    """Every shard's ``entries`` (each with its ``cluster``), cluster by cluster in the run's order."""
    position = {c["name"]: i for i, c in enumerate(clusters(shards))}
    found = [e for s in shards for e in entries(s)]
    return sorted(found, key=lambda e: position.get(e.get("cluster") or "", len(position)))  # stable


def _outcome(entry: dict[str, Any]) -> Any:
    route, summary = entry["route"], entry["summary"]
    nodes = summary["gpuNodes"]
    return Outcome(entry["cluster"], Route(route["name"], route["variant"], route["origin"], tuple(route["packages"])),
                   [Diagnosis(d["code"], d["message"], d["node"], d["object"], tuple(d["notes"]))
                    for d in entry["findings"]],
                   [(n["name"], n["allocatable"]) for n in nodes], summary["pods"], summary["podsReady"],
                   summary["verification"], entry["source"], {n["name"]: n["gpus"] for n in nodes if n["gpus"]})


def _doctor(shards: list[Shard], fmt: str) -> int:
    refused = max(int(s.part.get("render", {}).get("exitCode", 0)) for s in shards)
    if refused:  # one run stops at the render and prints every cluster's render findings
        report.write([_finding(e) for e in _in_order(shards, lambda s: s.part["render"]["findings"])])
        return refused
    outcomes = [_outcome(e) for e in _in_order(shards, lambda s: s.document["clusters"])]
    failures = [(e["cluster"], _finding(e)) for e in _in_order(shards, lambda s: s.document["errors"])]
    if failures and not outcomes:
        report.write([f for _, f in failures])
        return EXIT_INPUT
    report.show("doctor", fmt, (outcomes, failures))
    if failures:
        report.write([f for _, f in failures])
        return EXIT_INPUT
    return EXIT_FINDINGS if any(o.errors for o in outcomes) else EXIT_OK


# --- diff --base: the review -------------------------------------------------------------------------


def _review_classes() -> dict[str, type]:
    """The classes a review is made of: the only ones a shard's report may name."""
    kinds = (Finding, Location, ObjectChange, PackageChange, PlatformDelta, SideSet, ClusterReview, InputChange,
             Prune, Review, VersionChange, Side)
    return {k.__name__: k for k in kinds}


def review_of(shards: list[Shard]) -> Any:
    """One review of the whole fleet from the shards' (what ``preview.review`` returns for it)."""
    classes = _review_classes()
    reviews = []
    for one in shards:
        try:
            decoded = sharded.decode(one.part.get("review"), classes)
        except (ValueError, TypeError, KeyError) as exc:
            raise refused(f"its review cannot be read: {exc}", one.where) from None
        if not isinstance(decoded, Review):
            raise refused("its shard section holds no review", one.where)
        reviews.append(decoded)
    merged = sorted((c for r in reviews for c in r.clusters), key=lambda c: c.name)  # as review() lists them
    inputs: dict[str, Any] = {}
    for r in reviews:
        for i in r.inputs:
            known = inputs.get(i.path)
            inputs[i.path] = i if known is None else known._replace(reaches=sorted({*known.reaches, *i.reaches}))
    bumps: dict[tuple[str, str], list[str]] = {}
    for c in merged:
        if c.version_bump is not None:
            bumps.setdefault(c.version_bump, []).append(c.name)
    document = shards[0].document
    sides = [Side(document[k]["revision"], document[k]["commit"], Path("."), None) for k in ("base", "head")]
    chart = document["chart"]
    return Review(sides[0], sides[1], merged, [inputs[p] for p in sorted(inputs)],
                  sum(r.rendered_base for r in reviews), sum(r.rendered_head for r in reviews),
                  sum(r.probed for r in reviews), reviews[0].platform_source, sum(r.helm_runs for r in reviews),
                  [VersionChange(old, new, names) for (old, new), names in sorted(bumps.items())],
                  [f for c in merged for f in c.notes],
                  ChartChoice(chart["mode"], chart.get("helm"), chart.get("helmVersion") or "", chart["asked"]))


def _diff(shards: list[Shard], fmt: str) -> int:
    options = shards[0].part["options"]
    review = review_of(shards)
    payload = review_report.ReviewReport(review, shards[0].part["rerun"], options["markdown_limit"], options["color"])
    report.show("review", fmt, payload)
    return preview.exit_code(review, options["fail_on_new_errors"], options["exit_zero"])


MERGERS: dict[str, Callable[[list[Shard], str], int]] = {"check": _findings, "render": _render, "ls": _ls,
                                                         "doctor": _doctor, "diff": _diff}
