"""A fast emitter for the plain data cozy-render writes, byte for byte what the ruamel dumper writes.

Emitting was a third of a fleet render: ruamel's representer builds a node graph, resolves every
scalar's tag with regular expressions and hands the events to libyaml, once per object file. Rendered
objects are plain data (dicts in insertion order, lists, str, int, bool, None), so this module writes
them directly, making the choices libyaml's emitter makes with the dumper's settings in
``renderer.output.yaml`` (block style, indent 2, indentless lists under a key, width 4096, unicode allowed,
``|`` for multi-line strings that a literal block reproduces, ``"`` for strings a YAML 1.1 reader would
not read back as strings):

- a scalar is plain when libyaml's analysis allows a plain block scalar (no indicator at the start, no
  ``: `` or `` #`` inside, no leading or trailing space, printable, one line) and a YAML 1.2 reader
  would read it back as a string (ruamel's implicit resolvers); else single-quoted; else
  double-quoted with libyaml's escapes;
- multi-line strings become literal blocks with libyaml's chomping indicator.

Whatever this emitter does not model exactly raises ``Unsupported`` before anything is returned, and
``renderer.output.yaml`` then writes the whole stream with ruamel instead: shared containers (ruamel
writes anchors), other types, floats other than plain decimals, keys that are not short one-line
strings, multi-line strings a literal block cannot hold, lines long enough for libyaml to fold, and
line-break characters other than ``\\n``. ``tests/output/test_emitter.py`` compares the two emitters on
every rendered sample and on generated data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from renderer.lazyre import lazy
from renderer.load.yamlio import literal_ok, needs_double_quotes

WIDTH = 4096  # renderer.output.yaml._dumper: y.width
_INDENT = 2


class Unsupported(Exception):
    """The data holds something only the ruamel dumper writes exactly; the caller falls back to it."""


# ruamel.yaml's YAML 1.2 implicit resolvers (ruamel/yaml/resolver.py, the (1, 2) entries): a plain
# scalar matching one is read back as that type, so a string that matches must be quoted.
_RESOLVES_NON_STR_PATTERN = (
    r"""(?:true|True|TRUE|false|False|FALSE
        |[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN)
        |[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+
        |<<|~|null|Null|NULL|=|!|&|\*
        |[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
        |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[\ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
         (?:[\ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)"""
)
# `$` in ruamel's patterns also matches before a final newline, which only matters for multi-line
# strings (never plain).
# Past a sign, every alternative but a few fixed words starts with a digit or a dot: the rest of the
# text is decided by a set lookup, and the patterns are compiled (~1 ms) only for numbers.
_RESOLVER_WORDS = frozenset(["true", "True", "TRUE", "false", "False", "FALSE", "<<", "~", "null", "Null",
                             "NULL", "=", "!", "&", "*"])
_NUMERIC_FIRST = frozenset("-+0123456789.")
_resolver: list[re.Pattern[str]] = []  # compiled on first use (~1 ms)


def _resolves_non_str(text: str) -> bool:
    """Whether a plain ``text`` would be read back as something other than a string."""
    if not text:
        return False
    if text[0] not in _NUMERIC_FIRST:
        return text in _RESOLVER_WORDS
    if not _resolver:
        _resolver.append(re.compile(_RESOLVES_NON_STR_PATTERN, re.X))
    return _resolver[0].fullmatch(text) is not None

# libyaml IS_PRINTABLE, by code point: \n, 0x20-0x7E, 0xA0-0xD7FF, 0xE000-0xFFFD without the BOM.
# Everything else (tabs, C1 controls, characters above the BMP) is "special": double-quoted. ASCII
# text is checked with a small character class (a class spanning the BMP costs ~4 ms to compile,
# paid by every process); other text character by character.
_ASCII_SPECIAL = lazy("[\x00-\x09\x0b-\x1f\x7f]")


def _is_special(ch: str) -> bool:
    code = ord(ch)
    if code < 0x80:
        return code != 0x0A and not 0x20 <= code <= 0x7E
    return not (0xA0 <= code <= 0xD7FF or (0xE000 <= code <= 0xFFFD and code != 0xFEFF))


def _has_special(text: str) -> bool:
    if text.isascii():
        return _ASCII_SPECIAL.search(text) is not None
    return any(map(_is_special, set(text)))  # each distinct character once: a long text repeats most


def _other_break(text: str) -> bool:
    """A line break other than \\n: libyaml treats them as breaks (U+2028/2029 are printable). Four
    substring tests, not a character class: the class cost every process ~0.6 ms to compile."""
    return "\r" in text or (not text.isascii() and ("\x85" in text or "\u2028" in text or "\u2029" in text))

_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
# A plain scalar that needs no further analysis: starts with a letter, digit, '/' or '_' and holds
# only characters that are never indicators.
_SIMPLE_PLAIN = lazy(r"[A-Za-z0-9_/][A-Za-z0-9_./\-]*\Z")

_ESCAPES = {0x00: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r",
            0x1B: "e", 0x22: '"', 0x5C: "\\", 0x85: "N", 0xA0: "_", 0x2028: "L", 0x2029: "P"}


def _double_quoted(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\\n\r\x85\u2028\u2029' or _is_special(ch):
            named = _ESCAPES.get(code)
            if named is not None:
                out.append("\\" + named)
            elif code <= 0xFF:
                out.append(f"\\x{code:02X}")
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04X}")
            else:
                out.append(f"\\U{code:08X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _plain_allowed(text: str) -> bool:
    """libyaml's block-plain analysis of a non-empty, one-line, printable string."""
    if text[0] == " " or text[-1] == " " or text.startswith(("---", "...")):
        return False
    first = text[0]
    n = len(text)
    followed_by_space = n == 1 or text[1] == " "
    if first in _FIRST_INDICATORS or (first in "?:-" and followed_by_space):
        return False
    start = 1
    while True:
        colon = text.find(":", start)
        if colon < 0:
            break
        if colon + 1 == n or text[colon + 1] == " ":
            return False
        start = colon + 1
    return " #" not in text


def _one_line(text: str, style: str | None) -> str:
    """A one-line scalar as libyaml writes it (plain, single- or double-quoted)."""
    if style == '"' or _has_special(text):
        return _double_quoted(text)
    if text and _plain_allowed(text) and not _resolves_non_str(text):
        return text
    return "'" + text.replace("'", "''") + "'"


_ambiguous = needs_double_quotes
_literal_ok = literal_ok


# How each string is written, as a value and as a key: a fleet writes the same strings thousands of
# times. Bounded, so a long run over varied data keeps its memory.
_VALUES: dict[str, str] = {}
_KEYS: dict[str, str] = {}
_MEMO_LIMIT = 50_000


class _Emitter:
    """One stream."""

    def __init__(self) -> None:
        if len(_VALUES) > _MEMO_LIMIT or len(_KEYS) > _MEMO_LIMIT:
            _VALUES.clear()
            _KEYS.clear()
        self.values = _VALUES
        self.keys = _KEYS
        self.lines: list[str] = []
        self.seen: set[int] = set()

    def key(self, key: Any) -> str:
        if type(key) is not str:
            raise Unsupported("non-string key")
        text = self.keys.get(key)
        if text is None:
            if "\n" in key or _other_break(key) or len(key.encode("utf-8")) > 128:
                raise Unsupported("complex key")  # libyaml writes `? key`
            if not key:
                text = "''"
            else:
                text = _one_line(key, '"' if _ambiguous(key) else None)
            self.keys[key] = text
        return text

    def scalar(self, value: Any) -> str | None:
        """The text of a one-line scalar, or None for a multi-line string (a literal block)."""
        kind = type(value)
        if kind is str:
            text = self.values.get(value)
            if text is not None:
                return text
            if _SIMPLE_PLAIN.match(value) and not _resolves_non_str(value) \
                    and not _ambiguous(value):
                text = value
            elif _other_break(value):
                raise Unsupported("line break other than \\n")
            elif "\n" in value:
                if _literal_ok(value) and not _has_special(value):
                    return None
                if _literal_ok(value) or _ambiguous(value):
                    text = _double_quoted(value)  # libyaml: a literal block may not hold special characters
                elif _has_special(value) or "\n " in value or " \n" in value:
                    text = _double_quoted(value)  # single quotes may not hold them either
                else:
                    raise Unsupported("multi-line single-quoted string")
            elif not value:
                text = "''"
            else:
                text = _one_line(value, '"' if _ambiguous(value) else None)
            self.values[value] = text
            return text
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return str(value)
        if value is None:
            return "null"
        if kind is float:
            text = repr(value)
            if re.fullmatch(r"-?[0-9]+\.[0-9]+", text):
                return text
            raise Unsupported("float")
        raise Unsupported(f"type {kind.__name__}")

    def literal(self, text: str, head: str, indent: int) -> None:
        """``head`` (``key:`` or ``-``) followed by a literal block holding ``text``."""
        if text[0] == "\n":
            raise Unsupported("literal block with an indentation indicator")
        if text[-1] != "\n":
            chomp = "-"
        elif len(text) == 1 or text[-2] == "\n":
            raise Unsupported("literal block with keep chomping")  # libyaml may end the stream with `...`
        else:
            chomp = ""
        self.lines.append(f"{head} |{chomp}")
        pad = " " * (indent + _INDENT)
        body = text[:-1] if chomp == "" else text
        self.lines.extend(pad + line if line else "" for line in body.split("\n"))

    def container(self, node: Any) -> None:
        if id(node) in self.seen:
            raise Unsupported("shared container")  # ruamel writes an anchor and an alias
        self.seen.add(id(node))

    def value(self, node: Any, head: str, indent: int, in_mapping: bool) -> None:
        """``node`` after ``head`` (``<pad>key:`` or ``<pad>-``), the head at column ``indent``."""
        kind = type(node)
        if kind is dict:
            self.container(node)
            if not node:
                self.lines.append(head + " {}")
            elif in_mapping:
                self.lines.append(head)
                self.mapping(node, indent + _INDENT, None)
            else:
                self.mapping(node, indent + _INDENT, head + " ")
        elif kind is list:
            self.container(node)
            if not node:
                self.lines.append(head + " []")
            elif in_mapping:
                self.lines.append(head)
                self.sequence(node, indent, None)  # libyaml: a list under a key is not indented
            else:
                self.sequence(node, indent + _INDENT, head + " ")
        else:
            text = self.scalar(node)
            if text is None:
                self.literal(node, head, indent)
                return
            line = f"{head} {text}"
            if len(line) > WIDTH:
                raise Unsupported("line libyaml would fold")
            self.lines.append(line)

    def mapping(self, node: dict[Any, Any], indent: int, lead: str | None) -> None:
        pad = " " * indent
        for k, v in node.items():
            head = (lead if lead is not None else pad) + self.key(k) + ":"
            lead = None
            self.value(v, head, indent, True)

    def sequence(self, node: list[Any], indent: int, lead: str | None) -> None:
        pad = " " * indent
        for item in node:
            head = (lead if lead is not None else pad) + "-"
            lead = None
            self.value(item, head, indent, False)

    def document(self, obj: Any) -> str:
        self.lines = []
        self.seen = set()
        kind = type(obj)
        if kind is dict and obj:
            self.container(obj)
            self.mapping(obj, 0, None)
        elif kind is list and obj:
            self.container(obj)
            self.sequence(obj, 0, None)
        else:
            raise Unsupported("document that is not a non-empty mapping or list")
        return "\n".join(self.lines) + "\n"


def dump_stream(objects: Iterable[Any]) -> str:
    """A ``---``-separated YAML stream of ``objects``; raises ``Unsupported`` (see the module docstring)."""
    emitter = _Emitter()
    return "---\n".join(emitter.document(obj) for obj in objects)
