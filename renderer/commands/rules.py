"""``cozy-render rules [CODE]`` and ``rules-doc``: the registry of every code the tool can print."""

from __future__ import annotations

import sys
from typing import Any

from renderer import report
from renderer.check.rules.docs import markdown
from renderer.errors import EXIT_INPUT, EXIT_OK, Finding, RenderError
from renderer.model import JSON_API_VERSION
from renderer.registry import FAMILY_TITLES, entries, explanation_text
from renderer.requests import RulesRequest


def run(req: RulesRequest) -> int:
    registry = entries()
    chosen = registry.get(req.code.upper()) if req.code is not None else None
    if req.code is not None and chosen is None:
        raise RenderError([Finding("CLI-RULES", f"no rule {req.code}; `cozy-render rules` lists them")], EXIT_INPUT)
    report.show("rules", req.fmt, (list(registry.values()), chosen))
    return EXIT_OK


# The payload: every registry entry, and the one CODE names (None: list them all).
Rules = tuple[list[Any], Any]


@report.reporter("rules", "json")
def _json(payload: Rules, streams: report.Streams) -> None:
    import json

    listed, chosen = payload
    streams.stdout.write(json.dumps({"apiVersion": JSON_API_VERSION, "kind": "Rules", "rules": [
        {"id": e.id, "severity": e.severity, "family": e.family, "summary": e.summary,
         "explanation": explanation_text(e), "sources": list(e.sources),
         **({"severities": [{"severity": s, "when": w} for s, w in e.severities]} if e.severities else {})}
        for e in (listed if chosen is None else [chosen])]}, indent=2) + "\n")


@report.reporter("rules", "text")
def _text(payload: Rules, streams: report.Streams) -> None:
    listed, found = payload
    if found is None:
        lines: list[str] = []
        family = None
        id_width = max(len(e.id) for e in listed)
        severity_width = max(len(e.shown_severity) for e in listed)
        for entry in listed:
            if entry.family != family:
                family = entry.family
                lines.append(f"{'' if not lines else chr(10)}{FAMILY_TITLES.get(family, family)}:\n")
            lines.append(f"  {entry.id:{id_width}} {entry.shown_severity:{severity_width}} {entry.summary}\n")
        streams.stdout.write("".join(lines))
        return
    text = f"{found.id} ({found.shown_severity}): {found.summary}\n\n"
    if found.severities:
        text += "".join(f"{severity} when {when}\n" for severity, when in found.severities) + "\n"
    text += f"{explanation_text(found)}\n\nSources:\n"
    streams.stdout.write(text + "".join(f"  - {s}\n" for s in found.sources))


def run_doc() -> int:
    """docs/rules.md, generated from the registry (also written by ``python -m renderer.generate``)."""
    sys.stdout.write(markdown())
    return EXIT_OK
