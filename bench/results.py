"""bench/RESULTS.md: each bench script owns one `## ` section and replaces only that; run.py owns the header."""

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


def write_header(text: str) -> None:
    """Replace everything before the first section by ``text``."""
    current = RESULTS.read_text() if RESULTS.exists() else ""
    first = re.search(r"^## ", current, re.M)
    RESULTS.write_text(text.rstrip() + "\n\n" + (current[first.start():] if first else ""))
