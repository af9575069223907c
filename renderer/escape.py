"""Values from input inside messages, made safe to print (issue 25 item 10).

A folder name, a cluster name or an environment value is attacker-chosen: printed raw it can forge a
second finding line, a GitHub ``::error`` workflow command or its properties, a shell-completion
candidate, or drive the terminal with escape sequences. Every message goes through ``printable``
(``Finding.format``, the GitHub annotations); values spliced into a message go through ``quote``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from renderer.lazyre import lazy

if TYPE_CHECKING:
    import re

# The longest value spliced into a message, in characters; the rest is cut and counted.
MAX_VALUE_CHARS = 240
# The longest message printed, in characters.
MAX_MESSAGE_CHARS = 4_000

# C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidirectional overrides
# (a terminal or a browser would reorder or break the line on them).
_UNSAFE = lazy("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
_PLAIN = lazy(r"[A-Za-z0-9._/@+=,:~\-]+")


def has_unsafe(text: str) -> bool:
    """Whether ``text`` holds a character ``printable`` would escape (a name a completion must not offer)."""
    return _UNSAFE.search(text) is not None


def _escape_char(found: re.Match[str]) -> str:
    char = found.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def printable(text: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` on one line: control and reordering characters as backslash escapes, cut after ``limit``."""
    return _UNSAFE.sub(_escape_char, _cut(str(text), limit))


def quote(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """A path or name for a message: as is when it holds only plain characters, else single-quoted
    with backslash escapes (never a raw control character, quote or newline); long values are cut
    with a count of what was left off."""
    text = str(value)
    if _PLAIN.fullmatch(text) and len(text) <= limit:
        return text
    inner = _UNSAFE.sub(_escape_char, _cut(text, limit).replace("\\", "\\\\").replace("'", "\\'"))
    return f"'{inner}'"


def github_data(text: str) -> str:
    """A GitHub workflow command's message (actions/toolkit ``escapeData``)."""
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A GitHub workflow command's property value (actions/toolkit ``escapeProperty``): also ``:`` and ``,``."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")
