"""A YAML snapshot (``kubectl get -o yaml``) read as kubectl reads YAML, from libyaml's event stream.

PyYAML's safe loader spends nine tenths of a 10,000-object snapshot in its pure-Python constructor (a
generator per mapping, a resolver call per scalar); libyaml's parser alone takes a tenth. Building
plain data straight from the parser's events, with one small stack, reads the same snapshot about ten
times faster (``bench/bench_diff.py``, "Diff against a snapshot").

Plain scalars are resolved as go-yaml v2 resolves them (``renderer.load.yamlio.go_resolve``), which is
how kubectl, Argo CD and Flux read YAML (sigs.k8s.io/yaml): YAML 1.1 booleans and nulls, Go integer
syntax, decimal floats, timestamps and ``12:30`` left as the text written. A quoted scalar is a string.
Mapping keys become strings as sigs.k8s.io/yaml makes them (``true: x`` is the key ``"true"``).

kubectl never writes anchors, aliases, merge keys or tags other than the core ones, so an alias (the
whole class of alias bombs) and a merge key are refused where they stand instead of being expanded.
Every refusal is a ``Refused`` carrying the 1-based line of the document it is in; the caller turns it
into its located error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from renderer.load import limits
from renderer.load.yamlio import go_resolve

_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_TAG + "str": str, _TAG + "int": int, _TAG + "float": float, _TAG + "bool": bool,
                _TAG + "null": type(None)}
_COLLECTION_TAGS = (None, "!", _TAG + "map", _TAG + "seq")


class Refused(Exception):
    """What is wrong, and the line of the document it is in (positions in the caller's terms)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _parser(text: str) -> tuple[Any, type[Exception]]:
    """libyaml's parser: PyYAML's when installed (the live extra), else ruamel.yaml.clib's (the base
    install); both yield the same events. The second value is the library's error class."""
    try:
        from yaml import YAMLError
        from yaml._yaml import CParser
    except ImportError:
        from _ruamel_yaml import CParser  # type: ignore[import-not-found,no-redef]  # ruamel.yaml.clib, no stubs
        from ruamel.yaml.error import YAMLError  # type: ignore[assignment]
    return CParser(text), YAMLError


def parser_error() -> type[Exception]:
    """The error class the parser raises for malformed YAML (with ``problem`` and ``problem_mark``)."""
    return _parser("")[1]


def _scalar(event: Any, line: int) -> Any:
    value = event.value
    tag = event.tag
    if tag is None or tag == "!":
        if event.style:  # quoted, literal or folded: always a string
            return value
        resolved = go_resolve(value)
    elif tag in _SCALAR_TAGS:
        if tag == _TAG + "str":
            return value
        resolved = go_resolve(value)
        wanted = _SCALAR_TAGS[tag]
        if not isinstance(resolved, wanted) or (wanted is int and isinstance(resolved, bool)):
            raise Refused(f"{value[:40]!r} cannot be read as !!{tag[len(_TAG):]}", line)
    else:
        raise Refused(f"unsupported YAML tag {tag[:80]}", line)
    if resolved is None or isinstance(resolved, (bool, int)):
        return resolved
    digits = value[1:] if value[:1] in "+-" else value
    if digits.isascii() and digits.isdigit():
        # A decimal integer past int64/uint64, which go-yaml reads as a float or a string; the API
        # server never wrote it, and the JSON snapshot of the same object is refused the same way.
        raise Refused("an integer outside the int64/uint64 range", line)
    if isinstance(resolved, str):
        return resolved
    if not isinstance(resolved, float) or resolved != resolved or resolved in (float("inf"), float("-inf")):
        raise Refused(f"{value[:40]!r} (NaN or infinity) is not a JSON number", line)
    return resolved


def _key(value: Any) -> str:
    """A mapping key as sigs.k8s.io/yaml turns it into JSON's (always a string)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def documents(text: str) -> Iterator[tuple[Any, int]]:
    """(document, 1-based line where its root starts) for each non-empty document of ``text``.

    Raises ``Refused`` for what kubectl never writes and the parser's own error for malformed YAML.
    """
    parser, _ = _parser(text)
    get_event = parser.get_event
    # (container, pending key) per open collection; a mapping's pending key is a 1-tuple once read.
    stack: list[tuple[Any, tuple[str] | None]] = []
    container: Any = None
    key: tuple[str] | None = None
    line = 1
    fresh = False
    max_depth = limits.MAX_DEPTH
    while True:
        event = get_event()
        kind = event.__class__.__name__
        if kind == "ScalarEvent":
            if fresh:
                line, fresh = event.start_mark.line + 1, False
            value = _scalar(event, line)
        elif kind == "MappingStartEvent" or kind == "SequenceStartEvent":
            if fresh:
                line, fresh = event.start_mark.line + 1, False
            if event.tag not in _COLLECTION_TAGS:
                raise Refused(f"unsupported YAML tag {str(event.tag)[:80]}", line)
            if container is not None and container.__class__ is dict and key is None:
                raise Refused("a mapping or list as a mapping key", line)
            stack.append((container, key))
            if len(stack) > max_depth:
                raise Refused(f"nested deeper than {max_depth} levels", line)
            container, key = ({} if kind == "MappingStartEvent" else []), None
            continue
        elif kind == "MappingEndEvent" or kind == "SequenceEndEvent":
            value = container
            container, key = stack.pop()
        elif kind == "AliasEvent":
            raise Refused("a YAML alias (or a recursive one): kubectl get output has none", line)
        elif kind == "DocumentStartEvent":
            fresh = True
            continue
        elif kind == "StreamEndEvent":
            return
        else:  # StreamStart, DocumentEnd
            continue
        if container is None:  # a document's root
            if value is not None:
                yield value, line
        elif container.__class__ is list:
            container.append(value)
        elif key is None:
            if value == "<<" and kind == "ScalarEvent" and not event.style:
                raise Refused("a YAML merge key (<<): kubectl get output has none", line)
            key = (_key(value),)
        else:
            container[key[0]] = value  # a repeated key: the last wins, as go-yaml's map decoding does
            key = None
