"""Printing a review: text (unified diffs, colour on a terminal), JSON (the shape below), Markdown
for a pull-request comment (a summary table, then one collapsible section per changed cluster, cut
to fit ``limit`` characters, saying what was cut and how to see all of it).

Every value printed comes from the masked copies (``renderer.preview.objects``): a Secret's
``data``/``stringData`` values are ``***``, ``*** (before)`` or ``*** (after)`` in every format.

JSON shape (``"version": 1``; keys are only ever added)::

    {"version": 1,
     "base": {"revision": "main", "commit": "<sha>"},
     "head": {"revision": "working tree", "commit": null},
     "platform_source": "helm" | "model",
     "changed_inputs": [{"path": "overlays/base/cluster.yaml", "reaches": ["c1", "c2"]}],
     "clusters": [{"cluster": "c1", "status": "added|removed|changed|unchanged", "rendered": true,
                   "changed_inputs": [...],
                   "base"/"head": {"status": "absent|rendered|refused|not-rendered",
                                   "platform_version", "refused_by": [finding]},
                   "objects": [{"apiVersion", "kind", "namespace", "name",
                                "status": "create|change|unchanged|orphaned",
                                "changes": [{"path": "/spec/x", "type": "added|removed|changed",
                                             "old": ..., "new": ...}]}],
                   "summary": {"create": 0, "change": 1, "unchanged": 4, "orphaned": 0},
                   "findings": {"introduced": [finding], "resolved": [finding]},
                   "platform": null | {"source", "failure": {"base", "head"},
                                       "packages": [{"name", "status": "added|removed|changed",
                                                     "origin": {"base", "head"}, "variant": {"base", "head"},
                                                     "changes": [...]}],
                                       "summary": {"added", "changed", "removed"}}}],
     "summary": {"clusters": {"added", "removed", "changed", "unchanged"},
                 "rendered": {"base": 3, "head": 4}, "probed": 7, "new_errors": 1}}

A finding is ``{"code", "severity", "message", "file", "line", "column"}`` (as ``check -o json``).
"""

from __future__ import annotations

import difflib
import shlex
from typing import Any, TextIO

from renderer.diff.compare import CHANGE, CREATE, ORPHANED, STATUS_TEXT, UNCHANGED, ref
from renderer.diff.report import use_colour  # noqa: F401 - the preview's --color is diff's (renderer.preview uses it)
from renderer.errors import Finding
from renderer.preview.objects import ObjectChange, counts
from renderer.preview.platform import ADDED, CHANGED, REMOVED, PlatformDelta
from renderer.preview.review import ClusterReview, Review

RED, GREEN, CYAN, BOLD, YELLOW, RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[33m", "\x1b[0m"
_STATUS_COLOUR = {CREATE: GREEN, CHANGE: YELLOW, ORPHANED: RED, UNCHANGED: ""}
_CLUSTER_COLOUR = {"added": GREEN, "changed": YELLOW, "removed": RED, "unchanged": ""}
WIDTH = max(len(STATUS_TEXT[s]) for s in (CREATE, CHANGE, UNCHANGED, ORPHANED))
COMMENT_MARKER = "<!-- cozy-render-diff -->"  # the CI recipes find (and update) their comment by it


def rerun_command(request: Any) -> str:
    """The command that prints everything, for the Markdown's "cut" note."""
    args = ["cozy-render", "diff", "--base", request.base]
    if request.head is not None:
        args += ["--head", request.head]
    if request.all_clusters:
        args.append("--all")
    args.append(str(request.path))
    return " ".join(shlex.quote(a) for a in args)


# --- shared pieces ------------------------------------------------------------------------------


def to_yaml(obj: Any) -> str:
    """Sorted keys (as kubectl diff shows objects), through the project's YAML writer."""
    from renderer.output.yaml import dump_one

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


def _counts_text(c: ClusterReview) -> str:
    n = counts(c.objects)
    refused = " and ".join(side for side, _ in _refusals(c))
    parts = [f"refused at the {refused}" if refused else
             f"{n[CREATE]} to create, {n[CHANGE]} to change, {n[UNCHANGED]} unchanged, {n[ORPHANED]} orphaned",
             f"findings +{len(c.introduced)} -{len(c.resolved)}"]
    if c.platform is not None:
        p = c.platform
        parts.append(f"platform Packages +{p.count(ADDED)} ~{p.count(CHANGED)} -{p.count(REMOVED)}")
    return f"{c.name}: " + "; ".join(parts)


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


_REFUSED_TEXT = ("the render at the {side} is refused (render exits 3; Argo CD's plugin generates nothing for it, "
                 "so nothing syncs): no objects compared, no platform reaction; refused by")


def _refusals(c: ClusterReview) -> list[tuple[str, tuple[Finding, ...]]]:
    """(side, the findings refusing it) for each refused side of the cluster."""
    return [(side, refusing) for side, failed, refusing in (("base", c.base_failed, c.refusing_base),
                                                             ("head", c.head_failed, c.refusing_head)) if failed]


def _side_dict(state: str, version: str | None, refusing: tuple[Finding, ...]) -> dict[str, Any]:
    return {"status": state, "platform_version": version, "refused_by": [f.as_dict() for f in refusing]}


def _failure_lines(p: PlatformDelta) -> list[str]:
    lines = []
    if p.failure_base != p.failure_head:
        if p.failure_head:
            lines.append(f"the head breaks the platform chart: {p.failure_head}")
        if p.failure_base:
            lines.append(f"the base broke the platform chart, the head does not: {p.failure_base}")
    return lines


# --- text ---------------------------------------------------------------------------------------


def write_text(review: Review, out: TextIO, colour: bool) -> None:
    from renderer.escape import printable  # paths, names and diff lines are the pull request's input

    def paint(text: str, c: str) -> str:
        return f"{c}{text}{RESET}" if colour and c else text

    out.write(f"cozy-render diff: base {_side(review, 'base')} -> head {_side(review, 'head')}\n")
    for path, clusters in review.reaches.items():
        out.write(printable(f"changed input {path} reaches {len(clusters)} cluster(s): {', '.join(clusters)}") + "\n")
    for c in review.clusters:
        if c.status == "unchanged":
            why = "" if c.rendered else " (reads no changed file: not rendered)"
            out.write(f"{'unchanged':<9}  cluster {c.name}{why}\n")
            continue
        out.write(paint(f"{c.status:<9}", _CLUSTER_COLOUR[c.status]) + f"  cluster {c.name}\n")
    for c in review.clusters:
        if c.status == "unchanged":
            continue
        out.write("\n" + paint(f"# cluster {c.name}: {c.status}", BOLD) + "\n")
        for side, refusing in _refusals(c):
            out.write(f"{_REFUSED_TEXT.format(side=side)}:\n")
            for f in refusing:
                out.write(f"  {f.format()}\n")
        for o in c.objects:
            status = paint(f"{STATUS_TEXT[o.status]:<{WIDTH}}", _STATUS_COLOUR[o.status])
            out.write(f"{status}  {printable(ref(o.key))}\n")
            if o.status != UNCHANGED:
                for line in unified(o):
                    out.write(_paint_diff(printable(line, 1 << 20), colour) + "\n")
        for f in c.introduced:
            out.write(paint("finding introduced", RED) + f"  {f.format()}\n")
        for f in c.resolved:
            out.write(paint("finding resolved", GREEN) + f"  {f.format()}\n")
        if c.platform is not None and c.platform.different:
            out.write(f"platform Packages, {_source_text(c.platform.source)}:\n")
            for line in _failure_lines(c.platform):
                out.write(f"  {printable(line)}\n")
            marks = {ADDED: "+", CHANGED: "~", REMOVED: "-"}
            if c.status in ("added", "removed"):
                out.write(f"  {marks[ADDED if c.status == 'added' else REMOVED]} {_whole_set(c.platform)}\n")
            else:
                for change in c.platform.changes:
                    out.write(f"  {marks[change.status]} {printable(_package_line(change))}\n")
        out.write(_counts_text(c) + "\n")
    out.write("\n" + _totals(review) + "\n")


def _totals(review: Review) -> str:
    by = {s: sum(1 for c in review.clusters if c.status == s) for s in ("added", "removed", "changed", "unchanged")}
    return (f"clusters: {by['added']} added, {by['removed']} removed, {by['changed']} changed, "
            f"{by['unchanged']} unchanged; rendered {review.rendered_base} at the base and {review.rendered_head} "
            f"at the head; platform Packages {_source_text(review.platform_source)}")


def _paint_diff(line: str, colour: bool) -> str:
    from renderer.diff.report import paint  # the live diff's colours, one definition

    return paint(line, colour)


# --- JSON ---------------------------------------------------------------------------------------


def as_dict(review: Review) -> dict[str, Any]:
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
        clusters.append({"cluster": c.name, "status": c.status, "rendered": c.rendered,
                         "changed_inputs": c.changed_inputs,
                         "base": _side_dict(c.base_state, c.versions[0], c.refusing_base),
                         "head": _side_dict(c.head_state, c.versions[1], c.refusing_head),
                         "objects": objects, "summary": counts(c.objects),
                         "findings": {"introduced": [f.as_dict() for f in c.introduced],
                                      "resolved": [f.as_dict() for f in c.resolved]},
                         "platform": platform})
    by = {s: sum(1 for c in review.clusters if c.status == s) for s in ("added", "removed", "changed", "unchanged")}
    return {"version": 1,
            "base": {"revision": review.base.label, "commit": review.base.commit},
            "head": {"revision": review.head.label, "commit": review.head.commit},
            "platform_source": review.platform_source,
            "changed_inputs": [{"path": p, "reaches": cs} for p, cs in review.reaches.items()],
            "clusters": clusters,
            "summary": {"clusters": by, "rendered": {"base": review.rendered_base, "head": review.rendered_head},
                        "probed": review.probed,
                        "new_errors": sum(len(c.new_errors) for c in review.clusters)}}


def as_json(review: Review) -> str:
    from renderer.escape import json_text

    return json_text(as_dict(review), indent=2, ensure_ascii=False, default=str) + "\n"


# --- Markdown -----------------------------------------------------------------------------------

# What inline Markdown (GFM) could read in text that never starts a line (every use follows a prefix):
# emphasis, code, links, tables' pipes, strikethrough; HTML's < > & become entities.
_MD_SPECIAL = "\\`*_[]|~"


def md(text: str) -> str:
    """Plain text as inline Markdown (never at the start of a line): the marks Markdown could read
    escaped, and the HTML characters as entities (GitHub also renders HTML)."""
    out = []
    for ch in str(text):
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch in _MD_SPECIAL:
            out.append("\\" + ch)
        elif ch in "\r\n":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _code(text: str) -> str:
    """Inline code that survives backticks and pipes in the text (a table cell)."""
    ticks = "`" * (max((len(r) for r in _runs(text, "`")), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text.replace('|', '&#124;')}{pad}{ticks}"


def _runs(text: str, ch: str) -> list[str]:
    runs, current = [], ""
    for c in text:
        if c == ch:
            current += c
        elif current:
            runs.append(current)
            current = ""
    if current:
        runs.append(current)
    return runs


def _fence(lines: list[str], info: str) -> str:
    body = "\n".join(lines)
    ticks = "`" * max(3, max((len(r) for r in _runs(body, "`")), default=0) + 1)
    return f"{ticks}{info}\n{body}\n{ticks}\n"


def _finding_md(f: Finding) -> str:
    where = f"{f.location.path}:{f.location.line}:{f.location.col}" if f.location else ""
    return f"{_code(where) + ' ' if where else ''}{f.severity} **{md(f.code)}**: {md(f.message)}"


def _row(c: ClusterReview) -> str:
    n = counts(c.objects)
    platform = "—"
    if c.platform is not None and c.platform.different:
        p = c.platform
        platform = f"+{p.count(ADDED)} ~{p.count(CHANGED)} -{p.count(REMOVED)}"
        if p.failure_head and p.failure_head != p.failure_base:
            platform += " (chart fails)"
    refused = " and ".join(side for side, _ in _refusals(c))
    objects = f"refused at the {refused}" if refused else f"+{n[CREATE]} ~{n[CHANGE]} -{n[ORPHANED]}"
    errors = f" ({len(c.new_errors)} new error{'s' * (len(c.new_errors) != 1)})" if c.new_errors else ""
    return (f"| {md(c.name)} | {c.status} | {objects} | +{len(c.introduced)} -{len(c.resolved)}{errors} "
            f"| {platform} |")


def _section(c: ClusterReview, with_diffs: bool) -> str:
    n = counts(c.objects)
    refused = " and ".join(side for side, _ in _refusals(c))
    objects = f"refused at the {refused}" if refused else f"objects +{n[CREATE]} ~{n[CHANGE]} -{n[ORPHANED]}"
    summary = f"<b>{md(c.name)}</b>: {c.status}, {objects}, findings +{len(c.introduced)} -{len(c.resolved)}"
    parts = [f"<details><summary>{summary}</summary>\n\n"]
    if c.changed_inputs:
        parts.append("Reads the changed " + ", ".join(_code(p) for p in c.changed_inputs) + ".\n\n")
    for side, refusing in _refusals(c):
        sentence = _REFUSED_TEXT.format(side=side)
        parts.append(f"**{md(sentence[:1].upper() + sentence[1:])}:**\n\n"
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
    if with_diffs and changed:
        lines = [line for o in changed for line in unified(o)]
        parts.append(_fence(lines, "diff") + "\n")
    elif changed:
        parts.append("_Diffs cut to fit the comment; see the note at the end._\n\n")
    parts.append("</details>\n\n")
    return "".join(parts)


def as_markdown(review: Review, command: str, limit: int) -> str:
    """The PR comment: never longer than ``limit`` characters."""
    by = {s: sum(1 for c in review.clusters if c.status == s) for s in ("added", "removed", "changed", "unchanged")}
    shown = [c for c in review.clusters if c.status != "unchanged"]
    head = [COMMENT_MARKER + "\n",
            f"### cozy-render diff: base {md(_side(review, 'base'))} → head {md(_side(review, 'head'))}\n\n",
            f"{by['changed']} changed, {by['added']} added, {by['removed']} removed, {by['unchanged']} unchanged "
            f"cluster(s). Platform Packages: {md(_source_text(review.platform_source))}.\n\n"]
    new_errors = sum(len(c.new_errors) for c in review.clusters)
    if new_errors:
        head.append(f"**{new_errors} new error finding(s).**\n\n")
    reach = [f"- {_code(p)} reaches {len(cs)} cluster(s): {md(', '.join(cs))}\n" for p, cs in review.reaches.items()]
    if not shown:
        text = "".join(head) + "No cluster renders differently.\n"
        return text if len(text) <= limit else text[:limit]
    table_head = "| cluster | status | objects +/~/- | findings +/- | platform Packages +/~/- |\n" \
                 "| --- | --- | --- | --- | --- |\n"
    rows = [_row(c) + "\n" for c in shown]
    # Sections of clusters with new errors first: if the cap cuts, it cuts what matters least.
    ordered = sorted(shown, key=lambda c: not c.new_errors)
    sections = [(c, _section(c, True), _section(c, False)) for c in ordered]
    see_all = f"Run {_code(command + ' -o text')} on a checkout (or open the job's full report) to see all of it."
    budget = limit - 600  # room for the note on what was cut
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
        out += f"\n… and {cut_rows} more changed cluster(s) not in this table.\n"
    out += "\n"
    without_diffs, left_out = [], []
    for c, full, compact in sections:
        if len(out) + len(full) <= budget:
            out += full
        elif len(out) + len(compact) <= budget:
            out += compact
            without_diffs.append(c.name)
        else:
            left_out.append(c.name)
    if without_diffs or left_out or cut_rows or cut_reach:
        note = ["\n**Cut to fit GitHub's 65,536-character comment limit**" if limit == 65_536
                else f"\n**Cut to fit the {limit:,}-character limit**"]
        if without_diffs:
            note.append(f"unified diffs of {len(without_diffs)} cluster(s)")
        if left_out:
            note.append(f"the sections of {len(left_out)} cluster(s) ({md(', '.join(left_out[:20]))}"
                        f"{', …' if len(left_out) > 20 else ''})")
        if cut_rows:
            note.append(f"{cut_rows} table row(s)")
        if cut_reach:
            note.append(f"{cut_reach} changed-input line(s)")
        tail = note[0] + (": " + "; ".join(note[1:]) if len(note) > 1 else "") + ". " + see_all + "\n"
        if len(out) + len(tail) > limit:
            tail = f"\n**Cut to fit the comment limit.** {see_all}\n"
        out += tail
    return out if len(out) <= limit else out[:limit]
