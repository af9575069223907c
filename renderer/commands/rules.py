"""``cozy-render rules [CODE]`` and ``rules-doc``: the registry of every code the tool can print."""

from __future__ import annotations

import sys

from renderer.errors import EXIT_INPUT, EXIT_OK, Finding, RenderError
from renderer.model import JSON_API_VERSION
from renderer.requests import RulesRequest


def run(req: RulesRequest) -> int:
    from renderer.registry import FAMILY_TITLES, entries, explanation_text

    registry = entries()
    if req.fmt == "json":
        import json

        chosen = list(registry.values()) if req.code is None else [registry.get(req.code.upper())]
        if chosen == [None]:
            raise RenderError([Finding("CLI-RULES", f"no rule {req.code}; `cozy-render rules` lists them")],
                              EXIT_INPUT)
        sys.stdout.write(json.dumps({"apiVersion": JSON_API_VERSION, "kind": "Rules", "rules": [
            {"id": e.id, "severity": e.severity, "family": e.family, "summary": e.summary,
             "explanation": explanation_text(e), "sources": list(e.sources),
             **({"severities": [{"severity": s, "when": w} for s, w in e.severities]} if e.severities else {})}
            for e in chosen if e is not None]}, indent=2) + "\n")
        return EXIT_OK
    if req.code is None:
        lines: list[str] = []
        family = None
        id_width = max(len(e.id) for e in registry.values())
        severity_width = max(len(e.shown_severity) for e in registry.values())
        for entry in registry.values():
            if entry.family != family:
                family = entry.family
                lines.append(f"{'' if not lines else chr(10)}{FAMILY_TITLES.get(family, family)}:\n")
            lines.append(f"  {entry.id:{id_width}} {entry.shown_severity:{severity_width}} {entry.summary}\n")
        sys.stdout.write("".join(lines))
        return EXIT_OK
    found = registry.get(req.code.upper())
    if found is None:
        raise RenderError([Finding("CLI-RULES", f"no rule {req.code}; `cozy-render rules` lists them")], EXIT_INPUT)
    text = f"{found.id} ({found.shown_severity}): {found.summary}\n\n"
    if found.severities:
        text += "".join(f"{severity} when {when}\n" for severity, when in found.severities) + "\n"
    text += f"{explanation_text(found)}\n\nSources:\n"
    sys.stdout.write(text + "".join(f"  - {s}\n" for s in found.sources))
    return EXIT_OK


def run_doc() -> int:
    """docs/rules.md, generated from the registry (also written by ``python -m renderer.generate``)."""
    from renderer.check.rules.docs import markdown

    sys.stdout.write(markdown())
    return EXIT_OK
