"""Values from input inside messages, made safe to print (issue 25 item 10).

A folder name, a cluster name or an environment value is attacker-chosen: printed raw it can forge a
second finding line, a GitHub ``::error`` workflow command or its properties, a shell-completion
candidate, or drive the terminal with escape sequences. Every message goes through ``printable``
(``Finding.format``, the GitHub annotations); values spliced into a message go through ``quote``.

Structurally, whatever a message says (issue 25 item 10):

- text: ``Finding.format`` prints the location's path through ``location_path`` (quoted when it could
  pose as another location or severity) and the message through ``printable`` (one line, cut with a
  count);
- GitHub annotations: ``github_data`` / ``github_property`` (the Actions toolkit's escaping, after
  ``printable``);
- JSON: ``Finding.as_dict`` cuts the message and path with a count, and ``json_text`` writes every
  document with the characters JSON allows raw (DEL, C1 controls, line separators, bidirectional
  overrides) as ``\\uXXXX`` escapes: the same data, nothing a terminal acts on;
- tables (diff, explain, inputs, ls) pass each cell through ``printable``; ``render --annotate``'s
  ``# file:line`` comments too, so a file name cannot end the comment and inject YAML;
- Markdown (the ``diff --base -o markdown`` pull-request comment, issue 34 item 9): ``markdown_text``
  for prose and table cells (no HTML, heading, link, image, @mention or #reference from the value),
  ``markdown_code`` for inline code and ``markdown_fence`` for blocks, both longer than any backtick
  run inside, so they always close.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from renderer.lazyre import lazy

if TYPE_CHECKING:
    import re

# The longest value spliced into a message, in characters; the rest is cut and counted.
MAX_VALUE_CHARS = 240
# The longest message printed, in characters.
MAX_MESSAGE_CHARS = 4_000

# C0 and C1 controls, DEL, the Unicode line/paragraph separators and bidirectional overrides (a terminal
# or a browser would reorder or break the line on them), and lone surrogates (a file name that is not
# UTF-8, read with surrogateescape: UTF-8 output cannot hold them).
_UNSAFE = lazy("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
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


def literal(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """A value for a message, always single-quoted (``'maybe'``, as ``repr`` shows a short string), with
    backslash escapes and cut with a count of what was left off."""
    text = quote(value, limit)
    return text if text.startswith("'") else f"'{text}'"


def github_data(text: str) -> str:
    """A GitHub workflow command's message (actions/toolkit ``escapeData``)."""
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A GitHub workflow command's property value (actions/toolkit ``escapeProperty``): also ``:`` and ``,``."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


# A path that holds ": " could pose as a second location or severity in ``path:line:col: error[CODE]:``.
_PATH_AMBIGUOUS = lazy(r": |['\\]")


def location_path(path: str, limit: int = 1000) -> str:
    """The path at the head of a finding line: as is (spaces and all, so editors can open it) unless it
    holds a control character, a quote, a backslash or ``": "``; then quoted as ``quote`` does."""
    if len(path) <= limit and not _UNSAFE.search(path) and not _PATH_AMBIGUOUS.search(path):
        return path
    return quote(path, limit)


def cut(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut after ``limit`` characters, with a count of the rest (for JSON, which escapes itself)."""
    return _cut(text, limit)


_JSON_RAW = lazy("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


def json_text(document: Any, **options: Any) -> str:
    """``json.dumps(document, **options)`` with the characters JSON lets through raw escaped as
    ``\\uXXXX`` (they can only occur inside strings, where the escape is the same character)."""
    import json

    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(document, **options))


# --- Markdown (GitHub-flavoured; the preview's pull-request comment, issue 34 items 9 and 10) ----------

# What inline Markdown could read in a value that never starts a line (every use follows a prefix):
# emphasis, code, links, images, tables' pipes, strikethrough, autolinks; HTML's < > & become entities.
_MD_SPECIAL = "\\`*_[]|~!"
_ZWJ = "\u200d"  # a zero-width joiner: GitHub links no @mention, #reference or URL it splits
_MD_LINKING = lazy(r"[@#]|://|(?i:www)\.")


def markdown_text(value: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A value as inline Markdown text on one line: control and bidi characters escaped (``printable``),
    Markdown's marks backslash-escaped, HTML's characters as entities, and every ``@``, ``#``, ``://`` and
    ``www.`` split by a zero-width joiner, so no mention, cross-reference, link or HTML comes from it."""
    out = []
    for ch in printable(value, limit):
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch in _MD_SPECIAL:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return _MD_LINKING.sub(lambda m: m.group()[0] + _ZWJ + m.group()[1:], "".join(out))


def _longest_run(text: str, char: str) -> int:
    longest = current = 0
    for c in text:
        current = current + 1 if c == char else 0
        longest = max(longest, current)
    return longest


def markdown_code(value: object, in_table: bool = False, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A value as an inline code span on one line (GitHub links nothing inside one): fenced by one backtick
    more than its longest run, padded when it starts or ends with one; in a table cell ``|`` escaped."""
    text = printable(value, limit)
    ticks = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip(" ") else ""
    return f"{ticks}{pad}{text.replace('|', chr(92) + '|') if in_table else text}{pad}{ticks}"


def markdown_fence(lines: list[str], info: str = "") -> str:
    """Lines as a fenced code block that always closes: each line ``printable``, the fence one backtick
    longer than any run in the body (at least three)."""
    body = "\n".join(printable(line, 1 << 20) for line in lines)
    ticks = "`" * max(3, _longest_run(body, "`") + 1)
    return f"{ticks}{info}\n{body}\n{ticks}\n"
