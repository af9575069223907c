"""The rules reference page (docs/rules.md), generated from the registry so it cannot drift from the code.

``python -m renderer.generate`` writes it (``--check`` fails when the committed page is stale);
``cozy-render rules-doc`` prints it.
"""

from __future__ import annotations

from collections.abc import Iterable

from renderer.registry import FAMILY_TITLES, Entry, entries, explanation_text

REGENERATE = "python -m renderer.generate"


def _escape(text: str) -> str:
    """Markdown-safe prose: <placeholders> outside `code` spans would be read as HTML tags."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _cell(text: str) -> str:
    return _escape(text).replace("|", "\\|").replace("\n", " ")


def markdown() -> str:
    registry = list(entries().values())
    groups: dict[str, list[Entry]] = {}
    for e in registry:
        groups.setdefault(e.family, []).append(e)
    lines = [
        "# Rules and codes",
        "",
        "",
        f"<!-- Generated from the registry by `{REGENERATE}`; do not edit by hand. -->",
        "",
        "`cozy-render check PATH` renders a cluster and runs every rule below; `render` runs them too.",
        "Each finding is one line, `file:line:col: severity[ID]: message`, located at the overlay value",
        "that caused it. Errors refuse a render (exit 3) and fail `check` (exit 1); warnings are printed",
        "and fail only with `--strict`. A code listed as `error\\|warning` reports some cases at each;",
        "its section says when. `cozy-render rules` lists every rule and code and",
        "`cozy-render rules ID` prints one explanation.",
        "",
        "Rule IDs and conditions follow section (g) of the project's Cozystack domain reference. Sources",
        "link to cozystack/cozystack (at the commit the default chart was vendored from) and to the",
        "cozystack/website docs (`content/en/docs/next/`), both Apache-2.0.",
        "The codes after the rules are cozy-render's own: input it refuses, contradictions inside an",
        "overlay, integration and output errors.",
        "",
        "| ID | Severity | Summary |",
        "| --- | --- | --- |",
    ]
    for e in registry:
        lines.append(f"| [{e.id}](#{e.id.lower()}) | {_cell(e.shown_severity)} | {_cell(e.summary)} |")
    for family, members in groups.items():
        lines += ["", f"## {FAMILY_TITLES.get(family, family)}"]
        for e in members:
            lines += ["", f"### {e.id}", "", f"**{e.shown_severity}**: {_escape(e.summary)}", ""]
            lines += [f"- **{severity}** when {_escape(when)}" for severity, when in e.severities]
            lines += [""] if e.severities else []
            lines += [_escape(explanation_text(e))]
            lines += ["", "Sources:", ""] + [f"- {s}" for s in _sources(e.sources)]
    return "\n".join(lines) + "\n"


def _sources(sources: Iterable[str]) -> list[str]:
    # Source paths carry globs (bundles/*.yaml); a bare * would start emphasis in Markdown.
    return [s.replace("*", "\\*") for s in sources]
