"""Printing outcomes (the ``diff`` reporters of ``renderer.formats``): a status line per object,
unified diffs, a summary, or JSON; and the KUBECTL_EXTERNAL_DIFF hand-off, as kubectl does it."""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from renderer.diff.compare import (
    CHANGE,
    CREATE,
    ORPHANED,
    PATCH_TARGET_MISSING,
    SKIPPED,
    STATUS_TEXT,
    UNCHANGED,
    Item,
    Outcome,
    ref,
)
from renderer.errors import EXIT_INPUT, Finding, RenderError
from renderer.escape import json_text, printable
from renderer.formats import Streams, reporter
from renderer.model import JSON_API_VERSION
from renderer.output.yaml import display

RED, GREEN, CYAN, BOLD, YELLOW, RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[33m", "\x1b[0m"
_STATUS_COLOUR = {CREATE: GREEN, CHANGE: YELLOW, ORPHANED: RED, PATCH_TARGET_MISSING: RED, SKIPPED: CYAN,
                  UNCHANGED: ""}
WIDTH = max(len(t) for t in STATUS_TEXT.values())


class DiffReport(NamedTuple):
    """What the live diff prints: each cluster's outcome, every finding and failure (JSON carries them;
    text leaves them to stderr), ``--color``, and whether several clusters need a header each."""

    outcomes: list[Outcome]
    findings: list[Finding]
    color: str = "auto"
    several: bool = False


@reporter("diff", "json")
def _json(report: DiffReport, streams: Streams) -> None:
    streams.stdout.write(as_json(report.outcomes, report.findings))


@reporter("diff", "text")
def _text(report: DiffReport, streams: Streams) -> bool:
    """Status lines and diffs; with KUBECTL_EXTERNAL_DIFF set the diffs are that program's, run once on
    every cluster's objects after the status lines (as kubectl hands them off). Returns whether the program
    found differences."""
    out = streams.stdout
    external = os.environ.get("KUBECTL_EXTERNAL_DIFF") or None
    colour = use_colour(report.color, out)
    for outcome in report.outcomes:
        write_text(outcome, out, colour, with_diffs=external is None, header=report.several)
    out.flush()
    return external is not None and bool(report.outcomes) and run_external(external, report.outcomes) == 1


def use_colour(choice: str, stream: TextIO) -> bool:
    """--color auto: only on a terminal and without NO_COLOR (https://no-color.org); always/never win."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return not os.environ.get("NO_COLOR") and stream.isatty()


def to_yaml(obj: Any) -> str:
    """Sorted keys (as kubectl diff shows objects) through the project's one YAML writer
    (``renderer.output.yaml.display``), the same bytes in every install: PyYAML (the live extra) is
    never asked, and a string a YAML 1.1 reader (kubectl) would take for another type is quoted
    (``"yes"``, ``"on"``, ``"0755"``, ``"~"``). Multi-line strings are literal blocks, so a changed line
    of an embedded config (a NAD's CNI JSON) is one line of the diff."""
    if obj is None:
        return ""

    return display(obj)


def unified(item: Item) -> list[str]:
    name = ref(item.key).replace(" ", "/")
    return list(difflib.unified_diff(to_yaml(item.live).splitlines(), to_yaml(item.desired).splitlines(),
                                     f"live/{name}", f"render/{name}", lineterm=""))


def paint(line: str, colour: bool) -> str:
    """A unified-diff line in the terminal colours diff and diff --base share."""
    if not colour:
        return line
    if line.startswith(("+++", "---")):
        return BOLD + line + RESET
    if line.startswith("+"):
        return GREEN + line + RESET
    if line.startswith("-"):
        return RED + line + RESET
    if line.startswith("@@"):
        return CYAN + line + RESET
    return line


def summary(outcome: Outcome) -> str:
    parts = [f"{outcome.count(CREATE)} to create", f"{outcome.count(CHANGE)} to change",
             f"{outcome.count(UNCHANGED)} unchanged", f"{outcome.count(ORPHANED)} orphaned"]
    for status in (SKIPPED, PATCH_TARGET_MISSING):
        if outcome.count(status):
            parts.append(f"{outcome.count(status)} {STATUS_TEXT[status]}")
    return f"{outcome.cluster}: " + ", ".join(parts)


_LINE = 1 << 20  # a diff line is shown whole; only its controls are escaped


def write_text(outcome: Outcome, out: TextIO, colour: bool, with_diffs: bool, header: bool) -> None:
    if header:
        out.write(f"{BOLD}# cluster {outcome.cluster}{RESET}\n" if colour else f"# cluster {outcome.cluster}\n")
    for item in outcome.items:
        text = f"{STATUS_TEXT[item.status]:<{WIDTH}}"
        c = _STATUS_COLOUR[item.status] if colour else ""
        status = f"{c}{text}{RESET}" if c else text
        note = f"  ({item.note})" if item.note and item.status != UNCHANGED else ""
        out.write(f"{status}  {printable(ref(item.key) + note, _LINE)}\n")  # names and notes are live input
        if with_diffs and item.status in (CHANGE, CREATE, ORPHANED):
            for line in unified(item):
                out.write(paint(printable(line, _LINE), colour) + "\n")
    out.write(printable(summary(outcome), _LINE) + "\n")


def changes(item: Item) -> list[dict[str, Any]]:
    """Changed paths with old and new values (only called for objects that are not ``==``), named as
    deepdiff's tree view names them (values_changed, type_changes, dictionary_item_added/removed,
    iterable_item_added/removed), without its import: maps by key, lists by index."""
    if item.live is None or item.desired is None:
        return [{"path": "", "type": "object_added" if item.live is None else "object_removed",
                 **({"new": item.desired} if item.live is None else {"old": item.live})}]
    out: list[dict[str, Any]] = []
    stack: list[tuple[Any, Any, list[Any]]] = [(item.live, item.desired, [])]
    while stack:
        old, new, path = stack.pop()
        if isinstance(old, dict) and isinstance(new, dict):
            for key in old.keys() - new.keys():
                out.append({"path": _pointer([*path, key]), "type": "dictionary_item_removed", "old": old[key]})
            for key in new.keys() - old.keys():
                out.append({"path": _pointer([*path, key]), "type": "dictionary_item_added", "new": new[key]})
            stack.extend((old[k], new[k], [*path, k]) for k in old.keys() & new.keys() if old[k] != new[k])
        elif isinstance(old, list) and isinstance(new, list):
            for i in range(len(new), len(old)):
                out.append({"path": _pointer([*path, i]), "type": "iterable_item_removed", "old": old[i]})
            for i in range(len(old), len(new)):
                out.append({"path": _pointer([*path, i]), "type": "iterable_item_added", "new": new[i]})
            stack.extend((a, b, [*path, i]) for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b)
        elif _same_type(old, new):
            out.append({"path": _pointer(path), "type": "values_changed", "old": old, "new": new})
        else:
            out.append({"path": _pointer(path), "type": "type_changes", "old": old, "new": new})
    return sorted(out, key=lambda e: e["path"])


def _same_type(a: Any, b: Any) -> bool:
    return type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                  and not isinstance(a, bool) and not isinstance(b, bool))


def _pointer(parts: list[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def as_json(outcomes: list[Outcome], findings: list[Finding]) -> str:
    clusters = []
    for outcome in outcomes:
        objects = []
        for item in outcome.items:
            _group, kind, ns, name = item.key
            entry: dict[str, Any] = {"apiVersion": item.api_version, "kind": kind, "namespace": ns or None,
                                     "name": name, "status": item.status}
            if item.note:
                entry["note"] = item.note
            if item.status in (CHANGE, CREATE, ORPHANED):
                entry["changes"] = changes(item)
            objects.append(entry)
        counts = {s: outcome.count(s) for s in (CREATE, CHANGE, UNCHANGED, ORPHANED, SKIPPED, PATCH_TARGET_MISSING)}
        clusters.append({"cluster": outcome.cluster, "objects": objects, "summary": counts})

    return json_text({"apiVersion": JSON_API_VERSION, "kind": "Diff", "clusters": clusters,
                      "findings": [f.as_dict() for f in findings]}, indent=2,
                      sort_keys=False, ensure_ascii=False) + "\n"


# --- KUBECTL_EXTERNAL_DIFF ----------------------------------------------------------------------

_VALID_ARG = re.compile(r"^[a-zA-Z0-9-=]+$")  # kubectl drops any other extra argument


def external_command(value: str, live: str, merged: str) -> list[str]:
    """kubectl's reading of KUBECTL_EXTERNAL_DIFF (``DiffProgram.getCommand``): split on spaces; the
    program, the two folders, then only the extra arguments made of letters, digits, '-' and '='."""
    program, *extra = value.split(" ")
    return [program, live, merged, *[a for a in extra if _VALID_ARG.match(a)]]


def _file_name(item: Item) -> str:
    group, kind, ns, name = item.key
    version = item.api_version.rsplit("/", 1)[-1]
    return (f"{group}." if group else "") + f"{version}.{kind}.{ns}.{name}"


def run_external(value: str, outcomes: list[Outcome]) -> int:
    """Write LIVE and MERGED folders (kubectl's layout: group.version.Kind.namespace.name files) and run
    the program once on them; its exit code 0 or 1 is ours, anything else is an error."""
    with tempfile.TemporaryDirectory(prefix="cozy-render-diff-") as tmp:
        live_dir, merged_dir = Path(tmp, "LIVE"), Path(tmp, "MERGED")
        live_dir.mkdir()
        merged_dir.mkdir()
        for outcome in outcomes:
            for item in outcome.items:
                if item.status not in (CHANGE, CREATE, ORPHANED, UNCHANGED):
                    continue
                name = (f"{outcome.cluster}." if len(outcomes) > 1 else "") + _file_name(item)
                if item.live is not None:
                    (live_dir / name).write_text(to_yaml(item.live), encoding="utf-8")
                if item.desired is not None:
                    (merged_dir / name).write_text(to_yaml(item.desired), encoding="utf-8")
        command = external_command(value, str(live_dir), str(merged_dir))
        try:
            code = subprocess.call(command)
        except OSError as exc:
            raise RenderError([Finding("DIFF-EXTERNAL", f"KUBECTL_EXTERNAL_DIFF={shlex.quote(value)}: {exc}")],
                              EXIT_INPUT) from None
    if code not in (0, 1):
        raise RenderError([Finding("DIFF-EXTERNAL", f"KUBECTL_EXTERNAL_DIFF program {command[0]} exited {code}")],
                          EXIT_INPUT)
    return code
