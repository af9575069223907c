"""Evaluate the few Go template expressions the platform chart's bundle conditions use, in Python.

The generated catalogue (``renderer/_generated/platform/<version>.json``) keeps each Package's
emission condition as the chart's own expression text (``and .Values.bundles.iaas.enabled (or (eq
.Values.bundles.system.variant "isp-full") ...)``); the render-path model evaluates it here with Go
template semantics: Go truthiness, ``eq`` that refuses to compare different kinds, field access that
fails on a non-map exactly as text/template does, and Sprig's ``default``/``has``/``dig``. An
expression outside this subset raises ``Unsupported`` at generation time, so vendoring a chart that
uses more fails loudly instead of being modelled wrongly.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any


class Unsupported(ValueError):
    """An expression the evaluator does not model (raised while generating, never at render)."""


class GoTemplateError(ValueError):
    """What text/template or Sprig would fail with; ``at`` is the failing node, as helm prints it."""

    def __init__(self, at: str, message: str, key: tuple[str, ...] = ()) -> None:
        super().__init__(f"at <{at}>: {message}")
        self.at = at
        self.message = message
        self.key = key  # the platform value path at fault, where the node does not name it


_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<open>\()|(?P<close>\))|(?P<pipe>\|)'
                    r'|(?P<field>(?:\$[A-Za-z_]\w*)?(?:\.[A-Za-z_][\w-]*)+|\$[A-Za-z_]\w*|\.(?=\s|\)|$))'
                    r'|(?P<num>-?\d+(?:\.\d+)?)|(?P<ident>[A-Za-z_]\w*))')


def tokenize(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if not found or found.end() == pos:
            raise Unsupported(f"cannot read {text[pos:]!r} in {text!r}")
        kind = found.lastgroup or ""
        out.append((kind, found.group(kind)))
        pos = found.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


# An expression tree: ("lit", value) | ("field", ".Values.a.b") | ("walk", base, [keys], text) |
# ("call", name, [args]); a chart variable is inlined as (cozyVar "$name" <definition>).
Node = tuple[Any, ...]
FUNCTIONS = ("and", "or", "not", "eq", "ne", "has", "default", "list", "dig", "hasKey", "empty", "kindIs", "lookup",
             "cozyVar")


@lru_cache(maxsize=1024)
def parsed(text: str) -> Node:
    """``parse`` without variables, cached: the generated conditions repeat (every Package of a
    bundle shares its guards), and a render evaluates them all."""
    return parse(text)


def parse(text: str, variables: dict[str, Node] | None = None) -> Node:
    """Parse a pipeline; ``$name`` variables are replaced by their parsed definitions."""
    tokens = tokenize(text)
    node, rest = _pipeline(tokens, variables or {})
    if rest:
        raise Unsupported(f"trailing {rest!r} in {text!r}")
    return node


def _pipeline(tokens: list[tuple[str, str]], variables: dict[str, Node]) -> tuple[Node, list[tuple[str, str]]]:
    node, tokens = _command(tokens, variables)
    while tokens and tokens[0][0] == "pipe":
        call, tokens = _command(tokens[1:], variables)
        if call[0] != "call":
            raise Unsupported("a pipe into a non-function")
        node = ("call", call[1], [*call[2], node])
    return node, tokens


def _command(tokens: list[tuple[str, str]], variables: dict[str, Node]) -> tuple[Node, list[tuple[str, str]]]:
    if not tokens:
        raise Unsupported("empty command")
    kind, value = tokens[0]
    if kind == "ident":
        if value not in FUNCTIONS and value not in ("true", "false", "nil"):
            raise Unsupported(f"function {value}")
        if value in ("true", "false", "nil"):
            return ("lit", {"true": True, "false": False, "nil": None}[value]), tokens[1:]
        args: list[Node] = []
        tokens = tokens[1:]
        while tokens and tokens[0][0] not in ("close", "pipe"):
            arg, tokens = _operand(tokens, variables)
            args.append(arg)
        return ("call", value, args), tokens
    return _operand(tokens, variables)


def _operand(tokens: list[tuple[str, str]], variables: dict[str, Node]) -> tuple[Node, list[tuple[str, str]]]:
    kind, value = tokens[0]
    if kind == "open":
        node, rest = _pipeline(tokens[1:], variables)
        if not rest or rest[0][0] != "close":
            raise Unsupported("unbalanced parentheses")
        return node, rest[1:]
    if kind == "str":
        return ("lit", bytes(value[1:-1], "utf-8").decode("unicode_escape")), tokens[1:]
    if kind == "num":
        return ("lit", float(value) if "." in value else int(value)), tokens[1:]
    if kind == "ident" and value in ("true", "false", "nil"):
        return ("lit", {"true": True, "false": False, "nil": None}[value]), tokens[1:]
    if kind == "ident" and value in ("list",):
        return ("call", value, []), tokens[1:]
    if kind == "field":
        if value.startswith("$"):
            name, _, fields = value.partition(".")
            if name not in variables:
                raise Unsupported(f"unknown variable {name}")
            base = variables[name]
            if fields:
                return ("walk", base, fields.split("."), value), tokens[1:]
            return base, tokens[1:]
        if not value.startswith(".Values.") and value != ".Values":
            raise Unsupported(f"field {value}")
        return ("field", value), tokens[1:]
    raise Unsupported(f"operand {value!r}")


def truthy(value: Any) -> bool:
    """text/template's truth: false, 0, nil, and empty strings, maps and lists are false."""
    return bool(value)


# Go's dynamic type of a Helm value of each kind (what a failed interface conversion names).
_GO_TYPES = {"bool": "bool", "float64": "float64", "string": "string", "slice": "[]interface {}",
             "map": "map[string]interface {}", "invalid": "<nil>"}


def go_kind(value: Any) -> str:
    if value is None:
        return "invalid"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "float64"  # Helm values come through JSON: every number is a float64
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "slice"
    return "map"


def _field(root: dict[str, Any], path: str) -> Any:
    node: Any = {"Values": root}
    walked = ""
    for key in path.lstrip(".").split("."):
        if isinstance(node, dict):
            node = node.get(key)
        elif node is None:
            raise GoTemplateError(path, f"nil pointer evaluating interface {{}}.{key}")
        else:
            raise GoTemplateError(path, f"can't evaluate field {key} in type {_go_type(node)}")
        walked += "." + key
    return node


def _go_type(value: Any) -> str:
    return "interface {}" if not isinstance(value, dict) else "map[string]interface {}"


def evaluate(node: Node, values: dict[str, Any]) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "call" and node[1] == "cozyVar":  # an inlined chart variable: (cozyVar "$name" <definition>)
        return evaluate(node[2][1], values)
    if kind == "field":
        return _field(values, node[1])
    if kind == "walk":
        base = evaluate(node[1], values)
        for key in node[2]:
            if isinstance(base, dict):
                base = base.get(key)
            elif base is None:
                raise GoTemplateError(node[3], f"nil pointer evaluating interface {{}}.{key}")
            else:
                raise GoTemplateError(node[3], f"can't evaluate field {key} in type {_go_type(base)}")
        return base
    name, args = node[1], node[2]
    if name == "and":
        result: Any = True
        for arg in args:
            result = evaluate(arg, values)
            if not truthy(result):
                return result
        return result
    if name == "or":
        result = False
        for arg in args:
            result = evaluate(arg, values)
            if truthy(result):
                return result
        return result
    evaluated = [evaluate(arg, values) for arg in args]
    if name == "not":
        return not truthy(evaluated[0])
    if name in ("eq", "ne"):
        first, second = evaluated[0], evaluated[1]
        if go_kind(first) != go_kind(second) and None not in (first, second):
            raise GoTemplateError(f"{name} {_show(args[0])} {_show(args[1])}",
                                  f"error calling {name}: incompatible types for comparison")
        same = first == second and go_kind(first) == go_kind(second)
        return same if name == "eq" else not same
    if name == "list":
        return list(evaluated)
    if name == "default":
        fallback, given = evaluated[0], evaluated[-1] if len(evaluated) > 1 else None
        return given if truthy(given) else fallback
    if name == "has":
        needle, haystack = evaluated
        if haystack is None:
            return False
        if not isinstance(haystack, list):
            raise GoTemplateError(f"has {_show(args[0])} {_show(args[1])}",
                                  f"error calling has: Cannot find has on type {_go_type(haystack)}")
        return any(go_kind(item) == go_kind(needle) and item == needle for item in haystack)
    if name == "hasKey":
        return isinstance(evaluated[0], dict) and evaluated[1] in evaluated[0]
    if name == "empty":
        return not truthy(evaluated[0])
    if name == "kindIs":
        return go_kind(evaluated[1]) == evaluated[0]
    if name == "lookup":
        return {}  # offline: every object a template looks up is assumed absent (helm template does the same)
    if name == "dig":
        *keys, fallback, tree = evaluated
        node_: Any = tree
        for key in keys:
            if not isinstance(node_, dict):
                raise GoTemplateError(f"dig {' '.join(_show(a) for a in args)}",
                                      f"error calling dig: interface conversion: interface {{}} is "
                                      f"{_GO_TYPES[go_kind(node_)]}, not map[string]interface {{}}")
            if key not in node_:
                return fallback
            node_ = node_[key]
        return node_
    raise Unsupported(f"function {name}")


def _show(node: Node) -> str:
    """A node as helm prints it in ``at <...>`` (close enough for variables and fields)."""
    if node[0] == "field":
        return node[1]
    if node[0] == "walk":
        return node[3]
    if node[0] == "lit":
        value = node[1]
        return f'"{value}"' if isinstance(value, str) else str(value).lower()
    if node[1] == "cozyVar":
        return str(node[2][0][1])
    return f"({node[1]} ...)"


def go_quote(value: str) -> str:
    """Go's %q for a string (strconv.Quote), which the chart's printf uses."""
    escapes = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v",
               "\\": r"\\", '"': r"\""}
    out = []
    for ch in value:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'
