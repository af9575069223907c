"""The only place that builds ruamel.yaml instances.

Overlay and manifest files are read round-trip so every value keeps its line and column; the
loaded tree is turned into plain Python data plus a map ``path -> Location``. Output is written
by the output stage (``renderer.output.yaml``), which asks this module how a YAML 1.1 reader
would read a string back.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError

from renderer.errors import Finding, Location, RenderError
from renderer.lazyre import lazy
from renderer.load import limits

Path_ = tuple[Any, ...]
Locations = dict[Path_, Location]
# ``locs[path + (KEY,)]`` is where the mapping key of ``path`` is written (values point at the value).
KEY = None


def _limit(message: str, where: Location) -> RenderError:
    return RenderError([Finding("OVL-LIMIT", message, where)])


def position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of character ``index`` in ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def read_text(path: Path, display: str) -> str:
    """A layer or manifest file as text, within the file and render budgets (``renderer.load.limits``)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise RenderError([Finding("OVL-PATH", f"cannot read file: {_os_reason(exc)}", Location(display))]) from None
    if not stat.S_ISREG(st.st_mode):
        raise RenderError([Finding("OVL-PATH", f"{describe_file_type(st.st_mode)}, not a regular file",
                                   Location(display))])
    start = Location(display, 1, 1)
    if st.st_size > limits.MAX_FILE_BYTES:
        raise _limit(f"file is {st.st_size} bytes; the limit is {limits.MAX_FILE_BYTES}", start)
    budget = limits.current()
    budget.files -= 1
    budget.input_bytes -= st.st_size
    if budget.files < 0:
        raise _limit(f"the render reads more than {limits.MAX_FILES} files", start)
    if budget.input_bytes < 0:
        raise _limit(f"the render's files add up to more than {limits.MAX_INPUT_BYTES} bytes", start)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limits.MAX_FILE_BYTES + 1)  # the file may grow between stat and read
    except OSError as exc:
        raise RenderError([Finding("OVL-PATH", f"cannot read file: {_os_reason(exc)}", Location(display))]) from None
    if len(data) > limits.MAX_FILE_BYTES:
        raise _limit(f"file is larger than {limits.MAX_FILE_BYTES} bytes", start)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8")
        line, col = position(good, len(good))
        raise RenderError([Finding("OVL-YAML", f"file is not UTF-8 text (byte 0x{data[exc.start]:02x})",
                                   Location(display, line, col))]) from None
    return text.removeprefix("\ufeff")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return exc.strerror or str(exc)


def describe_file_type(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"is {what}"
    return "is not a regular file"


def _mark_location(exc: Exception, display: str) -> Location:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return Location(display, 1, 1)
    return Location(display, mark.line + 1, mark.column + 1)


def load_documents(text: str, display: str, *, yaml11: bool = False,
                   max_documents: int = limits.MAX_DOCUMENTS) -> list[tuple[Any, Locations]]:
    """Parse a (multi-document) YAML text into plain data with positions; empty documents are dropped.

    Events and nodes come from ruamel's ``YAML(typ="safe")``, libyaml's C parser and composer where
    ruamel.yaml.clib is installed, which keeps every node's start mark; plain data is built from the
    node graph here, so positions cost nothing extra. Every node built is charged
    to the render's budget (``renderer.load.limits``). Overlays are YAML 1.2; ``yaml11`` reads a manifest
    file exactly as kubectl does (sigs.k8s.io/yaml on go-yaml v2, see ``go_resolve``).
    """
    nul = text.find("\0")
    if nul >= 0:
        raise RenderError([Finding("OVL-YAML", "file holds a NUL character",
                                   Location(display, *position(text, nul)))])
    out: list[tuple[Any, Locations]] = []
    try:
        reader = YAML(typ="safe")  # one per text: its constructor remembers every node it read
        explicit = _scan_events(reader.parse(text), display, max_documents)
        constructor = reader.constructor
        for root in reader.compose_all(text):
            if root is None or (root.tag.endswith(":null") and not getattr(root, "value", None)):
                continue
            locs: Locations = {}
            data = _Builder(constructor, display, locs, yaml11, explicit).build(root, ())
            out.append((data, locs))
    except RenderError:
        raise
    except ReaderError as exc:
        where = Location(display, *position(text, exc.position)) if isinstance(exc.position, int) \
            else Location(display, 1, 1)
        raise RenderError([Finding("OVL-YAML", f"invalid YAML: {exc.reason}", where)]) from None
    except MarkedYAMLError as exc:
        problem = exc.problem or str(exc).splitlines()[0]
        raise RenderError([Finding("OVL-YAML", f"invalid YAML: {problem}", _mark_location(exc, display))]) from None
    except YAMLError as exc:
        raise RenderError([Finding("OVL-YAML", f"invalid YAML: {str(exc).splitlines()[0]}",
                                   Location(display, 1, 1))]) from None
    except RecursionError:  # unreachable while MAX_DEPTH holds; kept so no input can crash the process
        raise _limit("YAML nesting is too deep", Location(display, 1, 1)) from None
    return out


_TAG = "tag:yaml.org,2002:"
_COLLECTION_TAGS = {"MappingStartEvent": _TAG + "map", "SequenceStartEvent": _TAG + "seq"}


def _scan_events(events: Iterator[Any], display: str, max_documents: int) -> set[tuple[int, int]]:
    """One pass over the flat event stream, before any node graph is built.

    Refuses what the composer would choke on or build needlessly: nesting deeper than MAX_DEPTH
    (libyaml's composer recurses in C), more documents than allowed, more nodes than the render has
    left (the composed graph holds at least one node per event), and tags on mappings and lists
    (``!!set``, ``!!omap``, ``!!python/object:...``). Returns the positions of scalars that carry an
    explicit tag, which are read by their tag rather than by the implicit resolver.
    """
    budget = limits.current()
    depth = documents = nodes = 0
    explicit: set[tuple[int, int]] = set()
    fresh_document = False
    for event in events:
        kind = type(event).__name__
        mark = event.start_mark
        if kind == "DocumentStartEvent":
            fresh_document = True
            continue
        if kind in ("ScalarEvent", "MappingStartEvent", "SequenceStartEvent"):
            empty = kind == "ScalarEvent" and event.value == "" and event.tag is None
            if fresh_document and not empty:
                documents += 1
                if documents > max_documents:
                    what = "an overlay file holds exactly one YAML document" if max_documents == 1 \
                        else f"a file may hold at most {max_documents} YAML documents"
                    raise RenderError([Finding("OVL-LIMIT" if max_documents > 1 else "OVL-SCHEMA", what,
                                               Location(display, mark.line + 1, mark.column + 1))])
            fresh_document = False
            nodes += 1
            if nodes > budget.nodes:
                raise _limit(f"the render's inputs hold more than {limits.MAX_NODES} YAML nodes",
                             Location(display, mark.line + 1, mark.column + 1))
            if kind == "ScalarEvent":
                if event.tag is not None and event.tag != "!":
                    explicit.add((mark.line, mark.column))
                continue
            if event.tag is not None and event.tag not in ("!", _COLLECTION_TAGS[kind]):
                raise RenderError([Finding("OVL-YAML", f"unsupported YAML tag {event.tag}",
                                           Location(display, mark.line + 1, mark.column + 1))])
            depth += 1
            if depth > limits.MAX_DEPTH:
                raise _limit(f"YAML nesting is deeper than {limits.MAX_DEPTH} levels",
                             Location(display, mark.line + 1, mark.column + 1))
        elif kind in ("MappingEndEvent", "SequenceEndEvent"):
            depth -= 1
        elif kind == "AliasEvent":
            fresh_document = False
    return explicit


# go-yaml v2's implicit resolution of plain scalars (resolve.go), which kubectl, Argo CD and Flux
# read manifests with (through sigs.k8s.io/yaml): YAML 1.1 booleans and nulls, Go integer syntax
# (0x, 0o, 0b, a leading 0 for octal, `_` anywhere), decimal floats; no sexagesimal (12:30 stays a
# string), and timestamps stay the text written. Values then pass through JSON, so an integral
# float is an integer and NaN/Infinity cannot be represented (kubectl refuses them; so do we).
_GO_TRUE = frozenset(["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"])
_GO_FALSE = frozenset(["n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"])
_GO_NULL = frozenset(["", "~", "null", "Null", "NULL"])
_GO_NOT_JSON = frozenset([".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
                          "-.inf", "-.Inf", "-.INF"])
_GO_FLOAT = lazy(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_DOT_FLOAT = lazy(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_GO_DIGITS = {16: frozenset("0123456789abcdefABCDEF"), 10: frozenset("0123456789"), 8: frozenset("01234567"),
              2: frozenset("01")}
_NOT_JSON = object()


def _lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point: exactly what strict UTF-8 cannot encode (no
    pattern to compile, ~0.3 ms of every start-up)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def go_resolve(value: str) -> Any:
    """A plain, untagged scalar as go-yaml v2 then JSON make it; ``_NOT_JSON`` for .nan/.inf."""
    if value in _GO_NULL:
        return None
    if value in _GO_TRUE:
        return True
    if value in _GO_FALSE:
        return False
    if value in _GO_NOT_JSON:
        return _NOT_JSON
    first = value[0]
    if first == ".":
        return _json_number(float(value)) if _GO_DOT_FLOAT.fullmatch(value) else value
    if first not in "+-0123456789":
        return value
    plain = value.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return number
    if _GO_FLOAT.fullmatch(plain):
        f = float(plain)
        if f not in (float("inf"), float("-inf")):  # Go's ParseFloat fails out of range: a string
            return _json_number(f)
    return value


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), else ParseUint(plain, 0, 64); None when neither parses."""
    if len(plain) > 70:  # longer than any int64/uint64 spelling (0b + 64 digits)
        return None
    sign, body = (plain[0], plain[1:]) if plain[:1] in "+-" else ("", plain)
    prefix = body[:2].lower()
    if prefix in ("0x", "0b", "0o"):
        base, digits = {"0x": 16, "0b": 2, "0o": 8}[prefix], body[2:]
    elif body[:1] == "0" and len(body) > 1:
        base, digits = 8, body[1:]
    else:
        base, digits = 10, body
    if not digits or not set(digits) <= _GO_DIGITS[base]:
        return None
    number = int(digits, base)
    if sign == "-":
        number = -number
    if -(2**63) <= number < 2**63 or (not sign and number < 2**64):
        return number
    return None


def _json_number(f: float) -> float | int:
    """What a float is after go's encoding/json and the apimachinery decoder: integral -> int64."""
    if f.is_integer() and abs(f) < 1e21 and -(2**63) <= f < 2**63:
        return int(f)
    return f


class _Builder:
    """Node graph -> plain data, recording where each value sits and refusing what we do not accept."""

    def __init__(self, constructor: Any, display: str, locs: Locations, yaml11: bool = False,
                 explicit: set[tuple[int, int]] | None = None) -> None:
        self.constructor = constructor
        self.display = display
        self.locs = locs
        self.yaml11 = yaml11
        self.explicit = explicit or set()
        self.budget = limits.current()
        self.active: set[int] = set()  # collections being built: a node met again is a recursive alias

    def at(self, node: Any) -> Location:
        mark = node.start_mark
        return Location(self.display, mark.line + 1, mark.column + 1)

    def charge(self, node: Any, count: int = 1) -> None:
        self.budget.nodes -= count
        if self.budget.nodes < 0:
            raise _limit(f"the render's inputs expand to more than {limits.MAX_NODES} nodes "
                         "(YAML aliases or << merges)", self.at(node))

    def build(self, node: Any, path: Path_) -> Any:
        self.charge(node)
        here = self.at(node)
        self.locs[path] = here
        kind = type(node).__name__
        if kind == "ScalarNode":
            return self._scalar(node, here)
        if len(path) >= limits.MAX_DEPTH:
            raise _limit(f"YAML nesting is deeper than {limits.MAX_DEPTH} levels once aliases are expanded", here)
        if id(node) in self.active:
            raise RenderError([Finding("OVL-YAML", "recursive YAML alias (a node that contains itself)", here)])
        self.active.add(id(node))
        try:
            if kind == "MappingNode":
                return self._mapping(node, path)
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: Any, path: Path_) -> dict[str, Any]:
        if node.tag != _TAG + "map":
            raise RenderError([Finding("OVL-YAML", f"unsupported YAML tag {node.tag}", self.at(node))])
        result: dict[str, Any] = {}
        merged: list[Any] = []
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                merged.extend(value_node.value if type(value_node).__name__ == "SequenceNode" else [value_node])
                continue
            self.charge(key_node)  # keys are nodes too (and events: the stream check counts them)
            key = self._key(key_node)
            if key in result:
                raise RenderError([Finding("OVL-YAML", f"duplicate key {key!r}", self.at(key_node))])
            key_at = self.locs[path + (key, KEY)] = self.at(key_node)
            result[key] = self.build(value_node, path + (key,))
            if type(value_node).__name__ != "ScalarNode":
                # A finding about a whole mapping or list points at its key, not at its first entry.
                self.locs[path + (key,)] = key_at
        for source in merged:  # YAML merge keys: explicit keys win, earlier merge sources win
            if type(source).__name__ != "MappingNode":
                raise RenderError([Finding("OVL-YAML", "a << merge needs a mapping", self.at(source))])
            if id(source) in self.active:
                raise RenderError([Finding("OVL-YAML", "recursive YAML alias in a << merge", self.at(source))])
            self.charge(source, 1 + len(source.value))
            outer, self.locs = self.locs, {}
            self.active.add(id(source))
            try:
                part = self._mapping(source, path)
            finally:
                self.active.discard(id(source))
                scratch, self.locs = self.locs, outer
            added = [key for key in part if key not in result]
            for key in added:
                result[key] = part[key]
            n = len(path)
            fresh = set(added)
            for loc_path, loc in scratch.items():
                if len(loc_path) > n and loc_path[n] in fresh:
                    self.locs[loc_path] = loc
        return result

    def _key(self, key_node: Any) -> str:
        key = self._scalar(key_node, self.at(key_node)) if type(key_node).__name__ == "ScalarNode" else None
        if self.yaml11 and key is not None and not isinstance(key, str):
            # sigs.k8s.io/yaml turns non-string keys into JSON strings (`on:` is the key "true").
            key = ("true" if key else "false") if isinstance(key, bool) else str(key)
        if not isinstance(key, str):
            raise RenderError([Finding("OVL-YAML", "mapping keys must be strings", self.at(key_node))])
        return key

    def _scalar(self, node: Any, here: Location) -> Any:
        tag = node.tag
        mark = node.start_mark
        implicit = (mark.line, mark.column) not in self.explicit
        if self.yaml11 and implicit and not node.style:
            value = go_resolve(node.value)
        elif tag in (_TAG + "str", _TAG + "timestamp"):
            text = str(node.value)  # timestamps stay the text the user wrote
            if node.style == '"' and _lone_surrogate(text):
                raise RenderError([Finding("OVL-YAML", "a \\u escape makes a lone surrogate, which is not Unicode "
                                           "text", here)])
            return text
        elif tag == _TAG + "null":
            if node.value not in _GO_NULL:
                raise RenderError([Finding("OVL-YAML", f"{node.value!r} is not a YAML null", here)])
            return None
        elif tag in (_TAG + "bool", _TAG + "int", _TAG + "float"):
            value = self._construct(node, here)
        else:
            raise RenderError([Finding("OVL-YAML", f"unsupported YAML tag {tag}", here)])
        if value is _NOT_JSON or (isinstance(value, float) and (value != value or value in (float("inf"),
                                                                                          float("-inf")))):
            raise RenderError([Finding("OVL-YAML", f"{node.value!r} (NaN or infinity) is not a JSON number; "
                                       "Kubernetes cannot hold it", here)])
        if isinstance(value, int) and not isinstance(value, bool) and not limits.INT_MIN <= value <= limits.INT_MAX:
            raise RenderError([Finding("OVL-YAML", "integer out of range (Kubernetes integers are 64-bit)", here)])
        return value

    def _construct(self, node: Any, here: Location) -> Any:
        kind = node.tag[len(_TAG):]
        text = str(node.value)
        if kind == "int" and len(text.replace("_", "")) > 70:
            raise RenderError([Finding("OVL-YAML", "integer out of range (Kubernetes integers are 64-bit)", here)])
        try:
            value = self.constructor.construct_object(node)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError):
            value = None
        wanted = {"bool": bool, "int": int, "float": float}[kind]
        if not isinstance(value, wanted) or (kind == "int" and isinstance(value, bool)):
            raise RenderError([Finding("OVL-YAML", f"{text!r} cannot be read as !!{kind}", here)]) from None
        return value


def list_items(items: list[Any], locs: Locations, key: str = "items") -> list[tuple[Any, Locations]]:
    """A ``kind: List``'s items, each with its own positions; one pass over ``locs`` (linear, not per item)."""
    split: list[Locations] = [{} for _ in items]
    for path, loc in locs.items():
        if len(path) >= 2 and path[0] == key and isinstance(path[1], int) and 0 <= path[1] < len(items):
            split[path[1]][path[2:]] = loc
    return list(zip(items, split, strict=True))


def load_data_file(path: Path) -> Any:
    """Load a trusted data file shipped with cozy-render (catalogue, variant data) without positions."""
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


# Strings a YAML 1.1 reader (Go's sigs.k8s.io/yaml, used by kubectl, Argo CD and Flux) would not read
# back as the same string; they are always quoted on output.
_YAML11_AMBIGUOUS = lazy(
    r"""^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
        |~|null|Null|NULL|
        [-+]?(?:0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)
        |[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
        |[-+]?[0-9]+(?:[eE][-+]?[0-9]+)?|=|<<)$""",
    re.X,
)


# Every alternative but these fixed words starts with a sign, a digit or a dot: other text is decided
# by a set lookup, without compiling the pattern (~0.7 ms).
_YAML11_WORDS = frozenset(["y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE",
                           "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null",
                           "NULL", "=", "<<"])
_YAML11_NUMERIC_FIRST = frozenset("-+0123456789.")


def needs_double_quotes(text: str) -> bool:
    """A string a YAML 1.1 reader (go-yaml v2: kubectl, Argo CD, Flux) would not read back as that
    string; the YAML writers (``renderer.output.yaml``, ``renderer.output.emitter``) double-quote it."""
    if not text:
        return False
    if text[0] in _YAML11_NUMERIC_FIRST:
        if _YAML11_AMBIGUOUS.match(text) is not None:
            return True
    elif (text[:-1] if text[-1] == "\n" else text) in _YAML11_WORDS:  # `$` matches before a final newline
        return True
    return not isinstance(go_resolve(text), str)


def literal_ok(text: str) -> bool:
    """A literal block reproduces the string exactly only without trailing spaces or tabs."""
    return not any(line != line.rstrip(" \t") for line in text.split("\n")) and not text.startswith((" ", "\t"))


_DISPLAY_BASE: ContextVar[tuple[Path, str] | None] = ContextVar("display_base", default=None)


@contextmanager
def display_relative_to(base: Path, prefix: str = "") -> Iterator[None]:
    """Within the block, messages show paths below ``base`` relative to it, after ``prefix`` (the
    base's own path in the repository, when it is a sub-tree). ``cmp generate`` uses the repository
    root, so a finding reads ``overlays/base/cluster.yaml:7:1`` instead of the cmp-server's temporary
    ``/tmp/_cmp_server/<id>/overlays/base/cluster.yaml``."""
    token = _DISPLAY_BASE.set((Path(os.path.abspath(base)), prefix.strip("/")))
    try:
        yield
    finally:
        _DISPLAY_BASE.reset(token)


def display_path(path: Path, base: Path | None = None) -> str:
    """Path as shown in messages: relative to ``base``, else to the ``display_relative_to`` base, else
    to the working directory (``../../base/cluster.yaml`` from a cluster folder). A path that shares
    no folder with the base but the filesystem root is shown absolute: ``../../../opt/x`` helps nobody.
    """
    prefix = ""
    if base is None:
        scoped = _DISPLAY_BASE.get()
        base, prefix = scoped if scoped else (Path.cwd(), "")
    target = os.path.abspath(path)
    start = os.path.abspath(base)
    try:
        if os.path.commonpath([target, start]) in (os.sep, ""):
            return target
        relative = Path(os.path.relpath(target, start)).as_posix()
    except ValueError:  # another drive (Windows)
        return target
    return f"{prefix}/{relative}" if prefix and not relative.startswith("..") else relative
