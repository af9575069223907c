"""How findings reach the user: text lines on stderr, GitHub workflow annotations, or JSON on stdout.

Every command reports through here; the core only returns or raises findings.
"""

from __future__ import annotations

import sys
from typing import TextIO

from renderer.errors import ERROR, Finding

FORMATS = ("text", "json", "github")


def text(findings: list[Finding]) -> str:
    return "".join(f.format() + "\n" for f in findings)


def write(findings: list[Finding], fmt: str = "text", stream: TextIO | None = None) -> None:
    """``text`` goes to stderr (one ``file:line:col: severity[CODE]: message`` per line); ``github``
    (workflow commands) and ``json`` go to stdout, where CI reads them."""
    if fmt == "json":
        import json

        (stream or sys.stdout).write(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=2) + "\n")
    elif fmt == "github":
        out = stream or sys.stdout
        for f in findings:
            out.write(_github(f))
    else:
        (stream or sys.stderr).write(text(findings))


def _github(f: Finding) -> str:
    from renderer.escape import github_data, github_property  # a path must not forge a command (issue 25 item 10)

    loc = f.location
    level = "error" if f.severity == ERROR else "warning"
    if loc and loc.line:
        where = f" file={github_property(loc.path)},line={loc.line},col={loc.col}"
    else:
        where = f" file={github_property(loc.path)}" if loc else ""
    return f"::{level}{where},title={github_property(f.code)}::{github_data(f.message)}\n"
