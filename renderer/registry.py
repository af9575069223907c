"""The registry of every code cozy-render can print: the reference rules (``renderer.check.rules``) and the
input, contradiction, integration, schema and I/O codes (``renderer.codes``).

``cozy-render rules`` lists it grouped by family; ``cozy-render rules CODE`` explains any entry;
``docs/rules.md`` is generated from it.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

from renderer.codes import FAMILIES, all_codes

# Section titles of reference (g), by rule-ID prefix, in the reference's order.
RULE_FAMILIES = {
    "PKG": "Package / PackageSource API",
    "PLT": "Platform Package",
    "GPU": "GPU operator",
    "HAMI": "HAMi",
    "HUB": "Hubble",
    "NET": "VLAN / multus",
}
FAMILY_TITLES = {**RULE_FAMILIES, **FAMILIES}


class Entry(NamedTuple):
    id: str
    severity: str
    summary: str
    explanation: str
    sources: tuple[str, ...]
    family: str
    is_rule: bool
    deferred_to: tuple[str, ...] = ()


def entries() -> dict[str, Entry]:
    """Rules first (reference (g) order), then the other codes by family; registry order within."""
    from renderer.check.rules import all_rules

    rank = {family: i for i, family in enumerate(FAMILY_TITLES)}
    found = [Entry(r.id, r.severity, r.summary, r.explanation, r.sources, r.family, True, r.deferred_to)
             for r in all_rules().values()]
    found += [Entry(c.id, c.severity, c.summary, c.explanation, c.sources, c.family, False)
              for c in all_codes().values()]
    indexed = sorted(enumerate(found), key=lambda ie: (rank.get(ie[1].family, len(rank)), ie[1].family, ie[0]))
    return {e.id: e for _, e in indexed}


def explanation_text(entry: Entry) -> str:
    """The explanation as written in the code, with the code's indentation removed."""
    first, _, rest = entry.explanation.partition("\n")
    body = textwrap.dedent(rest).strip("\n")
    text = f"{first.strip()}\n{body}".strip() if body else first.strip()
    if entry.deferred_to:
        text += f"\n\nCases that {', '.join(entry.deferred_to)} report more specifically are left to them."
    return text
