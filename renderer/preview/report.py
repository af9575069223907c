"""Printing a review: text (unified diffs, colour on a terminal), JSON (``cozy-render/v1``
``PreviewReport``, the schema ``cozy-render schema output preview`` prints), Markdown for a
pull-request comment (a summary table, then one collapsible section per change: clusters with the
same change are one group, cut to fit ``limit`` characters, saying what was cut and how to see all).

Every value printed comes from the masked copies (``renderer.preview.objects``): a Secret's
``data``/``stringData`` values are ``***``, ``*** (before)`` or ``*** (after)`` in every format.

Every value that comes from the repository (a cluster folder, a layer or changed file, a revision's
name, a finding's location and message, an object's name) is escaped for its format
(``renderer.escape``, issue 34 items 9 and 10): text through ``printable`` (one line, no control or
bidi character), Markdown through ``markdown_text``/``markdown_code``/``markdown_fence`` (no HTML,
link, heading, @mention or #reference the report did not make; fences always closed), JSON through
``json_text`` (the characters JSON lets through raw written as ``\\uXXXX``).

JSON shape (renderer/data/output-schemas/preview.schema.json; keys are only ever added)::

    {"apiVersion": "cozy-render/v1", "kind": "PreviewReport",
     "base": {"revision": "main", "commit": "<sha>"}, "head": {"revision": "working tree", "commit": null},
     "chart": {"mode": "model|helm", "asked": "model|helm|auto", "helm", "helmVersion"},
     "platform_source": "helm" | "model",
     "platform_versions": [{"base": "v1.6.2", "head": "v1.7.0", "reaches": ["c1"]}],
     "changed_inputs": [{"path", "change": "added|modified|deleted|renamed", "renamed_from", "kind": "file|variants",
                         "reaches": ["c1", "c2"]}],
     "clusters": [{"cluster": "c1", "status": "added|removed|renamed|changed|unchanged", "renamed_from": null,
                   "rendered": true, "group": 0, "changed_inputs": [...],
                   "base"/"head": {"status": "absent|rendered|refused|not-rendered", "platform_version",
                                   "refused_by": [finding]},
                   "objects": [{"apiVersion", "kind", "namespace", "name",
                                "status": "create|change|unchanged|orphaned",
                                "changes": [{"path": "/spec/x", "type": "added|removed|changed",
                                             "old": ..., "new": ...}]}],
                   "summary": {"create": 0, "change": 1, "unchanged": 4, "orphaned": 0},
                   "findings": [finding + {"change": "introduced|resolved"}],
                   "prune": null | {"pruned": ["Package/ns/name"], "kept": ["cozystack.x"]},
                   "platform": null | {"source", "failure": {"base", "head"},
                                       "packages": [{"name", "status": "added|removed|changed",
                                                     "origin": {"base", "head"}, "variant": {"base", "head"},
                                                     "changes": [...]}],
                                       "summary": {"added", "changed", "removed"}}}],
     "groups": [{"group": 0, "clusters": ["c1", "c2"]}],
     "findings": [finding + {"cluster"}],
     "summary": {"clusters": {"added", "removed", "renamed", "changed", "unchanged"},
                 "rendered": {"base": 3, "head": 4}, "probed": 7, "new_errors": 1}}

A finding is ``{"code", "severity", "message", "file", "line", "column"}`` (as ``check -o json``); the
top-level ``findings`` are the preview's own (PLT-09: what a removal or a rename leaves installed).
"""

from __future__ import annotations

import difflib
import json
import shlex
from typing import Any, NamedTuple, TextIO

from renderer.diff.compare import CHANGE, CREATE, ORPHANED, STATUS_TEXT, UNCHANGED, ref
from renderer.diff.report import paint, use_colour  # diff's --color and colours, one definition
from renderer.errors import Finding
from renderer.escape import json_text, markdown_code, markdown_fence, markdown_text, printable
from renderer.formats import Streams, reporter
from renderer.model import JSON_API_VERSION
from renderer.output.yaml import dump_one
from renderer.preview.objects import ObjectChange, counts
from renderer.preview.platform import ADDED, CHANGED, REMOVED, PlatformDelta
from renderer.preview.review import ClusterReview, Review

API_VERSION, KIND = JSON_API_VERSION, "PreviewReport"
RED, GREEN, CYAN, BOLD, YELLOW, RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[33m", "\x1b[0m"
_STATUS_COLOUR = {CREATE: GREEN, CHANGE: YELLOW, ORPHANED: RED, UNCHANGED: ""}
_CLUSTER_COLOUR = {"added": GREEN, "changed": YELLOW, "removed": RED, "renamed": CYAN, "unchanged": ""}
CLUSTER_STATUSES = ("added", "removed", "renamed", "changed", "unchanged")
WIDTH = max(len(STATUS_TEXT[s]) for s in (CREATE, CHANGE, UNCHANGED, ORPHANED))
COMMENT_MARKER = "<!-- cozy-render-diff -->"  # the CI recipes find (and update) their comment by it
GROUP_NAMES_SHOWN = 20  # cluster names a group's title lists before "and N more"


def rerun_command(request: Any) -> str:
    """The command that prints this whole preview (the Markdown's "cut" note): every option it ran with."""
    args = ["cozy-render", "diff", "--base", request.base]
    if request.head is not None:
        args += ["--head", request.head]
    if request.all_clusters:
        args.append("--all")
    for flag, value in (("--variants", request.variants), ("--root", request.root),
                        ("-k", request.kubernetes_version), ("--chart", request.chart),
                        ("--helm", request.helm), ("--platform-chart", request.platform_chart)):
        if value is not None:
            args += [flag, str(value)]
    for text in request.ignore:
        args += ["--ignore", text]
    if request.show_secrets:
        args.append("--show-secrets")
    args.append(str(request.path))
    return " ".join(shlex.quote(a) for a in args)


# --- shared pieces ------------------------------------------------------------------------------


def to_yaml(obj: Any) -> str:
    """Sorted keys (as kubectl diff shows objects), through the project's YAML writer."""
    return "" if obj is None else dump_one(_sorted(obj))


def _sorted(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sorted(node[k]) for k in sorted(node, key=str)}
    if isinstance(node, list):
        return [_sorted(v) for v in node]
    return node


def unified(change: ObjectChange) -> list[str]:
    name = ref(change.key).replace(" ", "/")
    return list(difflib.unified_diff(to_yaml(change.base).splitlines(), to_yaml(change.head).splitlines(),
                                     f"base/{name}", f"head/{name}", lineterm=""))


def _side(review: Review, which: str) -> str:
    side = review.base if which == "base" else review.head
    return f"{side.label} ({side.commit[:12]})" if side.commit else side.label


def _source_text(source: str) -> str:
    return "the real platform chart (helm)" if source == "helm" else "predicted by the built-in chart model (no helm)"


def _chart_text(review: Review) -> str:
    chart = getattr(review, "chart", None)
    return chart.describe() if chart is not None else f"platform chart: {_source_text(review.platform_source)}"


class Group(NamedTuple):
    """Changed clusters whose change is the same (objects, findings, platform): shown once."""

    clusters: list[ClusterReview]

    @property
    def first(self) -> ClusterReview:
        return self.clusters[0]


def _fingerprint(c: ClusterReview) -> str:
    """What a cluster's change is, without its name (findings by code and message, not file)."""
    def findings(fs: Any) -> list[Any]:
        return [(f.code, f.severity, f.message) for f in fs]

    platform = None if c.platform is None else (
        [p.as_dict() for p in c.platform.changes], c.platform.failure_base, c.platform.failure_head)
    return json.dumps([c.status, c.renamed_from, c.base_state, c.head_state, c.versions,
                       [(o.key, o.status, o.changes()) for o in c.objects], findings(c.introduced),
                       findings(c.resolved), findings(c.refusing_base), findings(c.refusing_head), platform,
                       c.prune, c.changed_inputs], sort_keys=True, default=str)


def groups(review: Review) -> list[Group]:
    """The changed clusters grouped by their change, in the order each change first appears."""
    out: dict[str, Group] = {}
    for c in review.clusters:
        if c.status != "unchanged":
            out.setdefault(_fingerprint(c), Group([])).clusters.append(c)
    return list(out.values())


def _names(names: list[str], limit: int = GROUP_NAMES_SHOWN) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _by_status(review: Review) -> dict[str, int]:
    return {s: sum(1 for c in review.clusters if c.status == s) for s in CLUSTER_STATUSES}


def _counts_text(c: ClusterReview) -> str:
    n = counts(c.objects)
    refused = " and ".join(side for side, _ in _refusals(c))
    parts = [f"refused at the {refused}" if refused else
             f"{n[CREATE]} to create, {n[CHANGE]} to change, {n[UNCHANGED]} unchanged, {n[ORPHANED]} orphaned",
             f"findings +{len(c.introduced)} -{len(c.resolved)}"]
    if c.platform is not None:
        p = c.platform
        parts.append(f"platform Packages +{p.count(ADDED)} ~{p.count(CHANGED)} -{p.count(REMOVED)}")
    return "; ".join(parts)


def _package_line(change: Any) -> str:
    origin = change.origin_head or change.origin_base
    if change.status == ADDED:
        return f"{change.name} ({origin}, variant {change.variant_head})"
    if change.status == REMOVED:
        return f"{change.name} ({origin}, variant {change.variant_base})"
    what = []
    if change.origin_base != change.origin_head:
        what.append(f"{change.origin_base} -> {change.origin_head}")
    if change.variant_base != change.variant_head:
        what.append(f"variant {change.variant_base} -> {change.variant_head}")
    what += [f"{c['path']} {c['type']}" for c in change.changes]
    return f"{change.name} ({origin}): " + ", ".join(what)


def _whole_set(p: PlatformDelta) -> str:
    """A new or removed cluster's whole platform-made set, as one line."""
    names = [c.name for c in p.changes]
    return f"{len(names)} platform-made Packages: {', '.join(names)}"


def _failure_lines(p: PlatformDelta) -> list[str]:
    lines = []
    if p.failure_base != p.failure_head:
        if p.failure_head:
            lines.append(f"the head breaks the platform chart: {p.failure_head}")
        if p.failure_base:
            lines.append(f"the base broke the platform chart, the head does not: {p.failure_base}")
    return lines


_REFUSED_TEXT = ("the render at the {side} is refused (render exits 3; Argo CD's plugin generates nothing for it, "
                 "so nothing syncs): no objects compared, no platform reaction; refused by")


def _refusals(c: ClusterReview) -> list[tuple[str, tuple[Finding, ...]]]:
    """(side, the findings refusing it) for each refused side of the cluster."""
    return [(side, refusing) for side, failed, refusing in (("base", c.base_failed, c.refusing_base),
                                                             ("head", c.head_failed, c.refusing_head)) if failed]


def _input_text(path: str, change: str, source: str | None, kind: str) -> str:
    what = "--variants file" if kind == "variants" else "input"
    how = f"renamed from {source}" if source is not None else change
    return f"changed {what} {path} ({how})"


def _version_text(old: str, new: str) -> str:
    return f"platform.version {old} -> {new}"


def _rename_lines(c: ClusterReview) -> list[str]:
    """What a removal or a rename does in Argo CD (the shipped ApplicationSet: one Application per folder)."""
    if c.prune is None:
        return []
    kept = f"{len(c.prune.kept)} platform-made Package(s) stay installed (resource-policy keep, PLT-09)"
    pruned = f"Argo CD prunes the {len(c.prune.pruned)} object(s) the Application synced: {', '.join(c.prune.pruned)}"
    if c.status == "renamed":
        return [f"renamed from {c.renamed_from}: the ApplicationSet deletes the Application of {c.renamed_from} "
                f"and creates one for {c.name} (its destination: the Argo CD cluster named {c.name})",
                pruned + "; the new Application creates them again, the platform Package included",
                kept + " while the platform Package is gone"]
    return [f"removed: the ApplicationSet deletes the Application of {c.name}", pruned,
            kept + ": delete the Package CRs to uninstall" + (f": {', '.join(c.prune.kept)}" if c.prune.kept else "")]


# --- text ---------------------------------------------------------------------------------------


class ReviewReport(NamedTuple):
    """What ``diff --base`` prints: the review, the command that reruns it (the comment names it), the
    Markdown size limit, and ``--color``."""

    review: Review
    command: str
    markdown_limit: int
    color: str = "auto"


@reporter("review", "json")
def _json(report: ReviewReport, streams: Streams) -> None:
    streams.stdout.write(as_json(report.review))


@reporter("review", "markdown")
def _markdown(report: ReviewReport, streams: Streams) -> None:
    """A pull-request comment (needs --base: the command line refuses it without)."""
    streams.stdout.write(as_markdown(report.review, report.command, report.markdown_limit))


@reporter("review", "text")
def _text(report: ReviewReport, streams: Streams) -> None:
    write_text(report.review, streams.stdout, use_colour(report.color, streams.stdout))


def write_text(review: Review, out: TextIO, colour: bool) -> None:
    def paint(text: str, c: str) -> str:
        return f"{c}{text}{RESET}" if colour and c else text

    def line(text: str) -> None:  # every line from values of the repository: one line, nothing raw
        out.write(printable(text, 1 << 20) + "\n")

    line(f"cozy-render diff: base {_side(review, 'base')} -> head {_side(review, 'head')}; {_chart_text(review)}")
    for v in review.versions:
        line(f"{_version_text(v.base, v.head)} in {len(v.reaches)} cluster(s): {', '.join(v.reaches)}")
    for i in review.inputs:
        line(f"{_input_text(i.path, i.change, i.renamed_from, i.kind)} reaches {len(i.reaches)} cluster(s): "
             f"{', '.join(i.reaches)}")
    for c in review.clusters:
        if c.status == "unchanged":
            why = "" if c.rendered else " (reads no changed file: not rendered)"
            line(f"{'unchanged':<9}  cluster {c.name}{why}")
            continue
        renamed = f" (renamed from {c.renamed_from})" if c.renamed_from else ""
        out.write(paint(f"{c.status:<9}", _CLUSTER_COLOUR[c.status]) + printable(f"  cluster {c.name}{renamed}") + "\n")
    for group in groups(review):
        c = group.first
        out.write("\n")
        if len(group.clusters) > 1:
            title = (f"# the same change in {len(group.clusters)} clusters ({c.status}; shown for {c.name}): "
                     f"{', '.join(x.name for x in group.clusters)}")
        else:
            title = f"# cluster {c.name}: {c.status}"
        out.write(paint(printable(title, 1 << 20), BOLD) + "\n")
        _text_body(c, out, paint, line, colour)
    out.write("\n" + _totals(review) + "\n")


def _text_body(c: ClusterReview, out: TextIO, paint: Any, line: Any, colour: bool) -> None:
    for text in _rename_lines(c):
        line(text)
    for side, refusing in _refusals(c):
        line(f"{_REFUSED_TEXT.format(side=side)}:")
        for f in refusing:
            out.write(f"  {f.format()}\n")
    for o in c.objects:
        status = paint(f"{STATUS_TEXT[o.status]:<{WIDTH}}", _STATUS_COLOUR[o.status])
        out.write(f"{status}  {printable(ref(o.key))}\n")
        if o.status != UNCHANGED:
            for diff_line in unified(o):
                out.write(_paint_diff(printable(diff_line, 1 << 20), colour) + "\n")
    for f in c.introduced:
        out.write(paint("finding introduced", RED) + f"  {f.format()}\n")
    for f in c.resolved:
        out.write(paint("finding resolved", GREEN) + f"  {f.format()}\n")
    for f in c.notes:
        out.write(paint("warning", YELLOW) + f"  {f.format()}\n")
    indent = ""
    if c.version_bump is not None:
        line(f"{_version_text(*c.version_bump)}; what the platform does differently:")
        indent = "  "
    if c.platform is not None and c.platform.different:
        line(f"{indent}platform Packages, {_source_text(c.platform.source)}:")
        for text in _failure_lines(c.platform):
            line(f"{indent}  {text}")
        marks = {ADDED: "+", CHANGED: "~", REMOVED: "-"}
        if c.status in ("added", "removed"):
            line(f"{indent}  {marks[ADDED if c.status == 'added' else REMOVED]} {_whole_set(c.platform)}")
        else:
            for change in c.platform.changes:
                line(f"{indent}  {marks[change.status]} {_package_line(change)}")
    elif indent:
        line(f"{indent}no platform Package changes" if c.platform is not None else
             f"{indent}not compared (a side is refused)" if c.base_failed or c.head_failed else
             f"{indent}the same effective Packages")
    line(f"{c.name}: {_counts_text(c)}")


def _totals(review: Review) -> str:
    by = _by_status(review)
    return (f"clusters: {by['added']} added, {by['removed']} removed, {by['renamed']} renamed, {by['changed']} "
            f"changed, {by['unchanged']} unchanged; rendered {review.rendered_base} at the base and "
            f"{review.rendered_head} at the head; platform Packages {_source_text(review.platform_source)}")


def _paint_diff(line: str, colour: bool) -> str:
    return paint(line, colour)


# --- JSON ---------------------------------------------------------------------------------------


def _side_dict(cluster: str, state: str, version: str | None, refusing: tuple[Finding, ...]) -> dict[str, Any]:
    return {"status": state, "platform_version": version,
            "refused_by": [{"cluster": cluster, **f.as_dict()} for f in refusing]}


def as_dict(review: Review) -> dict[str, Any]:
    grouped = [g for g in groups(review) if len(g.clusters) > 1]
    group_of = {c.name: i for i, g in enumerate(grouped) for c in g.clusters}
    clusters = []
    for c in review.clusters:
        objects = []
        for o in c.objects:
            _group, kind, ns, name = o.key
            entry: dict[str, Any] = {"apiVersion": o.api_version, "kind": kind, "namespace": ns or None,
                                     "name": name, "status": o.status}
            if o.status != UNCHANGED:
                entry["changes"] = o.changes()
            objects.append(entry)
        platform = None
        if c.platform is not None:
            p = c.platform
            platform = {"source": p.source, "failure": {"base": p.failure_base, "head": p.failure_head},
                        "packages": [change.as_dict() for change in p.changes],
                        "summary": {"added": p.count(ADDED), "changed": p.count(CHANGED),
                                    "removed": p.count(REMOVED)}}
        findings = [{"cluster": c.name, **f.as_dict(), "change": "introduced"} for f in c.introduced] + \
                   [{"cluster": c.name, **f.as_dict(), "change": "resolved"} for f in c.resolved]
        clusters.append({"cluster": c.name, "status": c.status, "renamed_from": c.renamed_from,
                         "rendered": c.rendered, "group": group_of.get(c.name),
                         "changed_inputs": c.changed_inputs,
                         "base": _side_dict(c.name, c.base_state, c.versions[0], c.refusing_base),
                         "head": _side_dict(c.name, c.head_state, c.versions[1], c.refusing_head),
                         "objects": objects, "summary": counts(c.objects), "findings": findings,
                         "prune": None if c.prune is None else {"pruned": c.prune.pruned, "kept": c.prune.kept},
                         "platform": platform})
    chart = getattr(review, "chart", None)
    return {"apiVersion": API_VERSION, "kind": KIND,
            "base": {"revision": review.base.label, "commit": review.base.commit},
            "head": {"revision": review.head.label, "commit": review.head.commit},
            "chart": chart.as_dict() if chart is not None else {"mode": review.platform_source,
                                                                "asked": review.platform_source,
                                                                "helm": None, "helmVersion": None},
            "platform_source": review.platform_source,
            "platform_versions": [{"base": v.base, "head": v.head, "reaches": v.reaches} for v in review.versions],
            "changed_inputs": [{"path": i.path, "change": i.change, "renamed_from": i.renamed_from, "kind": i.kind,
                                "reaches": i.reaches} for i in review.inputs],
            "clusters": clusters,
            "groups": [{"group": i, "clusters": [c.name for c in g.clusters]} for i, g in enumerate(grouped)],
            "findings": [{"cluster": c.name, **f.as_dict()} for c in review.clusters for f in c.notes],
            "summary": {"clusters": _by_status(review),
                        "rendered": {"base": review.rendered_base, "head": review.rendered_head},
                        "probed": review.probed,
                        "new_errors": sum(len(c.new_errors) for c in review.clusters)}}


def as_json(review: Review) -> str:
    return json_text(as_dict(review), indent=2, ensure_ascii=False, default=str) + "\n"


# --- Markdown -----------------------------------------------------------------------------------


def md(text: str) -> str:
    """A value as inline Markdown text (``renderer.escape.markdown_text``)."""
    return markdown_text(text)


def _code(text: str, in_table: bool = False) -> str:
    return markdown_code(text, in_table)


def _fence(lines: list[str], info: str) -> str:
    return markdown_fence(lines, info)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _finding_md(f: Finding) -> str:
    where = f"{f.location.path}:{f.location.line}:{f.location.col}" if f.location else ""
    return f"{_code(where) + ' ' if where else ''}{f.severity} **{md(f.code)}**: {md(f.message)}"


def _row(g: Group) -> str:
    c = g.first
    n = counts(c.objects)
    platform = "—"
    if c.platform is not None and c.platform.different:
        p = c.platform
        platform = f"+{p.count(ADDED)} ~{p.count(CHANGED)} -{p.count(REMOVED)}"
        if p.failure_head and p.failure_head != p.failure_base:
            platform += " (chart fails)"
    if c.version_bump is not None:
        platform = f"{md(_version_text(*c.version_bump))}: {platform}"
    refused = " and ".join(side for side, _ in _refusals(c))
    objects = f"refused at the {refused}" if refused else f"+{n[CREATE]} ~{n[CHANGE]} -{n[ORPHANED]}"
    errors = f" ({len(c.new_errors)} new error{'s' * (len(c.new_errors) != 1)})" if c.new_errors else ""
    names = [x.name for x in g.clusters]
    name = md(names[0]) if len(names) == 1 else f"{md(_names(names, 3))} ({len(names)} clusters)"
    status = f"renamed from {md(c.renamed_from)}" if c.renamed_from else c.status
    return f"| {name} | {status} | {objects} | +{len(c.introduced)} -{len(c.resolved)}{errors} | {platform} |"


def _section(g: Group, with_diffs: bool) -> str:
    c = g.first
    n = counts(c.objects)
    refused = " and ".join(side for side, _ in _refusals(c))
    objects = f"refused at the {refused}" if refused else f"objects +{n[CREATE]} ~{n[CHANGE]} -{n[ORPHANED]}"
    status = f"renamed from <b>{md(c.renamed_from)}</b>" if c.renamed_from else c.status
    what = f"{status}, {objects}, findings +{len(c.introduced)} -{len(c.resolved)}"
    if c.version_bump is not None:
        what += f", {md(_version_text(*c.version_bump))}"
    if len(g.clusters) == 1:
        parts = [f"<details><summary><b>{md(c.name)}</b>: {what}</summary>\n\n"]
    else:
        parts = [f"<details><summary><b>The same change in {len(g.clusters)} clusters</b>: {what}</summary>\n\n",
                 f"<details><summary>{len(g.clusters)} clusters (shown for <b>{md(c.name)}</b>)</summary>\n\n",
                 md(", ".join(x.name for x in g.clusters)) + "\n\n</details>\n\n"]
    if c.changed_inputs:
        parts.append("Reads the changed " + ", ".join(_code(p) for p in c.changed_inputs) + ".\n\n")
    parts.extend(f"- {md(text)}\n" for text in _rename_lines(c))
    if c.prune is not None:
        parts.append("\n")
    for side, refusing in _refusals(c):
        sentence = _REFUSED_TEXT.format(side=side)
        parts.append(f"**{md(_capital(sentence))}:**\n\n"
                     + "".join(f"- {_finding_md(f)}\n" for f in refusing) + "\n")
    changed = [o for o in c.objects if o.status != UNCHANGED]
    if changed:
        parts.append("| object | status |\n| --- | --- |\n")
        parts.extend(f"| {md(ref(o.key))} | {STATUS_TEXT[o.status]} |\n" for o in changed)
        parts.append(f"\n{n[UNCHANGED]} object(s) unchanged.\n\n")
    if c.introduced:
        parts.append("**Findings introduced**\n\n" + "".join(f"- {_finding_md(f)}\n" for f in c.introduced) + "\n")
    if c.resolved:
        parts.append("**Findings resolved**\n\n" + "".join(f"- {_finding_md(f)}\n" for f in c.resolved) + "\n")
    if c.notes:
        parts.append("**Warnings**\n\n" + "".join(f"- {_finding_md(f)}\n" for f in c.notes) + "\n")
    if c.version_bump is not None:
        parts.append(f"**{md(_version_text(*c.version_bump))}**: what the platform does differently\n\n")
    if c.platform is not None and c.platform.different:
        p = c.platform
        parts.append(f"**Platform Packages** ({md(_source_text(p.source))})\n\n")
        parts.extend(f"- {md(line)}\n" for line in _failure_lines(p))
        marks = {ADDED: "added", CHANGED: "changed", REMOVED: "removed"}
        if c.status in ("added", "removed"):
            parts.append(f"- {c.status}: {md(_whole_set(p))}\n")
        else:
            parts.extend(f"- {marks[change.status]}: {md(_package_line(change))}\n" for change in p.changes)
        parts.append("\n")
    elif c.version_bump is not None:
        parts.append("- no platform Package changes\n\n" if c.platform is not None else
                     "- not compared: a side is refused\n\n" if refused else "- the same effective Packages\n\n")
    if with_diffs and changed:
        lines = [line for o in changed for line in unified(o)]
        parts.append(_fence(lines, "diff") + "\n")
    elif changed:
        parts.append("_Diffs cut to fit the comment; see the note at the end._\n\n")
    parts.append("</details>\n\n")
    return "".join(parts)


def as_markdown(review: Review, command: str, limit: int) -> str:
    """The PR comment: never longer than ``limit`` characters."""
    by = _by_status(review)
    grouped = groups(review)
    head = [COMMENT_MARKER + "\n",
            f"### cozy-render diff: base {md(_side(review, 'base'))} → head {md(_side(review, 'head'))}\n\n",
            f"{by['changed']} changed, {by['added']} added, {by['removed']} removed, {by['renamed']} renamed, "
            f"{by['unchanged']} unchanged cluster(s). {md(_capital(_chart_text(review)))}; "
            f"platform Packages: {md(_source_text(review.platform_source))}.\n\n"]
    new_errors = sum(len(c.new_errors) for c in review.clusters)
    if new_errors:
        head.append(f"**{new_errors} new error finding(s).**\n\n")
    for v in review.versions:
        head.append(f"**{md(_version_text(v.base, v.head))}** in {len(v.reaches)} cluster(s): "
                    f"{md(_names(v.reaches))}.\n\n")
    reach = [f"- the platform chart {_code(v.base)} → {_code(v.head)} (`platform.version`), reaches {len(v.reaches)} "
             f"cluster(s): {md(_names(v.reaches))}\n" for v in review.versions]
    for item in review.inputs:
        how = f"renamed from {_code(item.renamed_from)}" if item.renamed_from is not None else item.change
        what = " (`--variants`)" if item.kind == "variants" else ""
        reach.append(f"- {_code(item.path)}{what} {how}, reaches {len(item.reaches)} cluster(s): "
                     f"{md(_names(item.reaches))}\n")
    if not grouped:
        text = "".join(head) + ("**Changed inputs**\n\n" + "".join(reach) + "\n" if reach else "") + \
            "No cluster renders differently.\n"
        return text if len(text) <= limit else "".join(head) + "No cluster renders differently.\n"
    table_head = "| cluster | status | objects +/~/- | findings +/- | platform Packages +/~/- |\n" \
                 "| --- | --- | --- | --- | --- |\n"
    rows = [_row(g) + "\n" for g in grouped]
    # Sections of changes with new errors first: if the cap cuts, it cuts what matters least.
    ordered = sorted(grouped, key=lambda g: not g.first.new_errors)
    sections = [(g, _section(g, True), _section(g, False)) for g in ordered]
    see_all = f"Run {_code(command + ' -o text')} on a checkout (or open the job's full report) to see all of it."
    budget = limit - 600 - len(see_all)  # room for the note on what was cut
    out = "".join(head)
    cut_rows = cut_reach = 0
    if reach:
        block = "**Changed inputs**\n\n"
        for i, line in enumerate(reach):
            if len(out) + len(block) + len(line) > budget // 4:
                cut_reach = len(reach) - i
                break
            block += line
        out += block + (f"- … {cut_reach} more changed file(s)\n" if cut_reach else "") + "\n"
    out += table_head
    for i, row in enumerate(rows):
        if len(out) + len(row) > budget // 2:
            cut_rows = len(rows) - i
            break
        out += row
    if cut_rows:
        out += f"\n… and {cut_rows} more change(s) not in this table.\n"
    out += "\n"
    without_diffs: list[str] = []
    left_out: list[str] = []
    for g, full, compact in sections:
        if len(out) + len(full) <= budget:
            out += full
        elif len(out) + len(compact) <= budget:
            out += compact
            without_diffs.append(g.first.name)
        else:
            left_out.extend(c.name for c in g.clusters)
    if without_diffs or left_out or cut_rows or cut_reach:
        note = ["\n**Cut to fit GitHub's 65,536-character comment limit**" if limit == 65_536
                else f"\n**Cut to fit the {limit:,}-character limit**"]
        if without_diffs:
            note.append(f"unified diffs of {len(without_diffs)} section(s)")
        if left_out:
            note.append(f"the sections of {len(left_out)} cluster(s) ({md(_names(left_out))})")
        if cut_rows:
            note.append(f"{cut_rows} table row(s)")
        if cut_reach:
            note.append(f"{cut_reach} changed-input line(s)")
        tail = note[0] + (": " + "; ".join(note[1:]) if len(note) > 1 else "") + ". " + see_all + "\n"
        if len(out) + len(tail) > limit:
            tail = f"\n**Cut to fit the comment limit.** {see_all}\n"
        out += tail
    return out if len(out) <= limit else out[:limit]
