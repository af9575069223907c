"""One way to state a target next to its figure, so every bench prints it alike and run.py can list them all.

Each bench writes a target as one Markdown bullet made by ``line()``:

    - cold render / kubectl kustomize: **0.93x** (target <= 1.0x: met)
    - fleet of 1,000, render --all --out: **11.6x** (target >= 20x: **MISSED**)

``collect()`` reads those bullets back out of a bench's section (the only lines of that exact shape),
which is how ``run.py`` builds the "Targets" summary at the top of RESULTS.md without each bench
having to speak a second, machine-readable protocol.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_CHECKS = {"<=": lambda v, b: v <= b, "<": lambda v, b: v < b, ">=": lambda v, b: v >= b,
           ">": lambda v, b: v > b}


def met(value: float, op: str, bound: float) -> bool:
    return _CHECKS[op](value, bound)


def line(label: str, value: float, op: str, bound: float, unit: str = "", digits: int = 2, note: str = "") -> str:
    """``- label: **value unit** (target op bound unit: met|**MISSED**)note`` (a missed target is bold)."""
    verdict = "met" if met(value, op, bound) else "**MISSED**"
    return (f"- {label}: **{value:,.{digits}f}{unit}** (target {op} {bound:g}{unit}: {verdict})"
            f"{'; ' + note if note else ''}")


class Target(NamedTuple):
    label: str
    figure: str
    target: str
    met: bool


_LINE = re.compile(r"^- (?P<label>.+?): \*\*(?P<figure>[^*]+)\*\* \(target (?P<target>[^:]+): "
                   r"(?P<verdict>met|\*\*MISSED\*\*)\)", re.M)


def collect(section: str) -> list[Target]:
    """Every target bullet ``line()`` wrote into ``section``, in order."""
    return [Target(m["label"], m["figure"], m["target"], m["verdict"] == "met") for m in _LINE.finditer(section)]


def summary(sections: list[tuple[str, str]]) -> str:
    """The "Targets" section: one row per target of every (title, section text), misses marked plainly."""
    rows = [(title, t) for title, text in sections for t in collect(text)]
    missed = [r for r in rows if not r[1].met]
    head = (f"## Targets: {len(rows) - len(missed)} of {len(rows)} met"
            + (f"; **{len(missed)} MISSED**" if missed else ""))
    lines = [head, "", "| bench | figure | measured | target | |", "| --- | --- | ---: | --- | --- |"]
    for title, t in rows:
        lines.append(f"| {title} | {t.label} | {t.figure} | {t.target} | {'met' if t.met else '**MISSED**'} |")
    if not rows:
        lines.append("| (no bench stated a target) | | | | |")
    return "\n".join(lines) + "\n"
