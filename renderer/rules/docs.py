"""The rules reference page (docs/rules.md), generated from the registry so it cannot drift from the code.

Regenerate with ``cozy-render rules-doc > docs/rules.md``; tests/rules/test_rules_doc.py fails when the
committed page differs from what this produces.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from renderer.rules import Rule

REGENERATE = "cozy-render rules-doc > docs/rules.md"

# Section titles of reference (g), by rule-ID prefix.
GROUPS = {
    "PKG": "Package / PackageSource API",
    "PLT": "Platform Package",
    "GPU": "GPU operator",
    "HAMI": "HAMi",
    "HUB": "Hubble",
    "NET": "VLAN / multus",
}


def explanation_text(r: Rule) -> str:
    """The explanation as written in the code, with the code's indentation removed."""
    first, _, rest = r.explanation.partition("\n")
    body = textwrap.dedent(rest).strip("\n")
    return f"{first.strip()}\n{body}".strip() if body else first.strip()


def _escape(text: str) -> str:
    """Markdown-safe prose: <placeholders> outside `code` spans would be read as HTML tags."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _cell(text: str) -> str:
    return _escape(text).replace("|", "\\|").replace("\n", " ")


def ordered(rules: dict[str, Rule]) -> list[Rule]:
    """Reference (g) order: groups as in GROUPS (unknown prefixes after), registry order inside."""
    rank = {prefix: i for i, prefix in enumerate(GROUPS)}
    indexed = list(enumerate(rules.values()))
    indexed.sort(key=lambda ir: (rank.get(ir[1].id.partition("-")[0], len(rank)), ir[1].id.partition("-")[0], ir[0]))
    return [r for _, r in indexed]


def markdown(rules: dict[str, Rule]) -> str:
    groups: dict[str, list[Rule]] = {}
    for r in ordered(rules):
        groups.setdefault(r.id.partition("-")[0], []).append(r)
    lines = [
        "# Rules",
        "",
        f"<!-- Generated from the rule registry by `{REGENERATE}`; do not edit by hand. -->",
        "",
        "`cozy-render check PATH` renders a cluster and runs every rule below; `render` runs them too.",
        "Each finding is one line, `file:line:col: severity[ID]: message`, located at the overlay value",
        "that caused it. Errors refuse a render (exit 3) and fail `check` (exit 1); warnings are printed",
        "and fail only with `--strict`. A few rules report some cases at another severity than the one",
        "listed; their explanation says which. `cozy-render rules` lists the rules and",
        "`cozy-render rules ID` prints one explanation.",
        "",
        "IDs and conditions follow section (g) of the project's Cozystack domain reference. Sources:",
        "`C:` is cozystack/cozystack, `W:` is cozystack/website `content/en/docs/next/` (both Apache-2.0).",
        "",
        "| ID | Severity | Summary |",
        "| --- | --- | --- |",
    ]
    for r in ordered(rules):
        lines.append(f"| [{r.id}](#{r.id.lower()}) | {r.severity} | {_cell(r.summary)} |")
    for prefix, members in groups.items():
        lines += ["", f"## {GROUPS.get(prefix, prefix)}"]
        for r in members:
            lines += ["", f"### {r.id}", "", f"**{r.severity}**: {_escape(r.summary)}", "",
                      _escape(explanation_text(r))]
            lines += ["", "Sources:", ""] + [f"- {s}" for s in _sources(r.sources)]
    return "\n".join(lines) + "\n"


def _sources(sources: Iterable[str]) -> list[str]:
    # Source paths carry globs (bundles/*.yaml); a bare * would start emphasis in Markdown.
    return [s.replace("*", "\\*") for s in sources]
