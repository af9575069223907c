"""bench/RESULTS.md: each bench script owns one `## ` section and replaces only that (run.py rewrites it whole)."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(heading: str, text: str) -> None:
    """Replace the section that starts with ``heading`` by ``text`` (or append it)."""
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    pattern = re.compile(re.escape(heading) + r".*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(current):
        updated = pattern.sub(lambda _m: text + "\n", current)
    else:
        updated = current.rstrip() + "\n\n" + text
    RESULTS.write_text(updated)

