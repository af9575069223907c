"""The only place that builds ruamel.yaml instances.

Overlay and manifest files are read round-trip so every value keeps its line and column; the
loaded tree is turned into plain Python data plus a map ``path -> Location``. Output is written
with one fixed dumper so the same objects always give the same bytes.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location, RenderError

MAX_FILE_BYTES = 4 * 1024 * 1024
# A plain-data node budget per file: stops alias bombs ("billion laughs"), which are tiny on disk
# and explode only when the shared nodes are walked.
MAX_NODES = 200_000
# libyaml's composer recurses in C per nesting level and crashes the process on deep input
# (measured: 50,000 nested flow lists); the event stream is flat, so depth is checked on it first.
MAX_DEPTH = 200

Path_ = tuple[Any, ...]
Locations = dict[Path_, Location]
# ``locs[path + (KEY,)]`` is where the mapping key of ``path`` is written (values point at the value).
KEY = None


def read_text(path: Path, display: str) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RenderError([Finding("OVL-PATH", f"cannot read file: {exc.strerror}", Location(display))]) from None
    if size > MAX_FILE_BYTES:
        raise RenderError(
            [Finding("OVL-LIMIT", f"file is {size} bytes; the limit is {MAX_FILE_BYTES}", Location(display))]
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RenderError([Finding("OVL-YAML", "file is not UTF-8 text", Location(display))]) from None
    except OSError as exc:
        raise RenderError([Finding("OVL-PATH", f"cannot read file: {exc.strerror}", Location(display))]) from None


def _mark_location(exc: Exception, display: str) -> Location:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return Location(display)
    return Location(display, mark.line + 1, mark.column + 1)


def load_documents(text: str, display: str, *, yaml11: bool = False) -> list[tuple[Any, Locations]]:
    """Parse a (multi-document) YAML text into plain data with positions; empty documents are dropped.

    Nodes come from ruamel's C composer (libyaml), which keeps every node's start mark; plain data
    is built from the node graph here, so positions cost nothing extra. ``yaml11`` reads the text the
    way Kubernetes tools do (yes/on/off are booleans); overlays use YAML 1.2.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    y = YAML(typ="safe")
    if yaml11:
        y.version = (1, 1)
    out: list[tuple[Any, Locations]] = []
    try:
        _refuse_deep_nesting(y, text, display)
        for root in y.compose_all(text):
            if root is None or (root.tag.endswith(":null") and not getattr(root, "value", None)):
                continue
            locs: Locations = {}
            data = _Builder(y.constructor, display, locs).build(root, ())
            out.append((data, locs))
    except RenderError:
        raise
    except MarkedYAMLError as exc:
        problem = exc.problem or str(exc).splitlines()[0]
        raise RenderError([Finding("OVL-YAML", f"invalid YAML: {problem}", _mark_location(exc, display))]) from None
    except YAMLError as exc:
        raise RenderError([Finding("OVL-YAML", f"invalid YAML: {str(exc).splitlines()[0]}", Location(display))]) \
            from None
    except RecursionError:
        raise RenderError([Finding("OVL-LIMIT", "YAML nesting is too deep", Location(display))]) from None
    return out


def _refuse_deep_nesting(y: Any, text: str, display: str) -> None:
    depth = 0
    for event in y.parse(text):
        kind = type(event).__name__
        if kind in ("MappingStartEvent", "SequenceStartEvent"):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                raise RenderError([Finding("OVL-LIMIT", f"YAML nesting is deeper than {MAX_DEPTH} levels",
                                           Location(display, mark.line + 1, mark.column + 1))])
        elif kind in ("MappingEndEvent", "SequenceEndEvent"):
            depth -= 1


_TAG = "tag:yaml.org,2002:"


class _Builder:
    """Node graph -> plain data, recording where each value sits and refusing what we do not accept."""

    def __init__(self, constructor: Any, display: str, locs: Locations) -> None:
        self.constructor = constructor
        self.display = display
        self.locs = locs
        self.budget = MAX_NODES

    def at(self, node: Any) -> Location:
        mark = node.start_mark
        return Location(self.display, mark.line + 1, mark.column + 1)

    def build(self, node: Any, path: Path_) -> Any:
        self.budget -= 1
        here = self.at(node)
        if self.budget < 0:
            raise RenderError([Finding(
                "OVL-LIMIT", f"document expands to more than {MAX_NODES} nodes (YAML alias bomb?)", here)])
        self.locs[path] = here
        kind = type(node).__name__
        if kind == "MappingNode":
            return self._mapping(node, path)
        if kind == "SequenceNode":
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        return self._scalar(node, here)

    def _mapping(self, node: Any, path: Path_) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merged: list[Any] = []
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                merged.extend(value_node.value if type(value_node).__name__ == "SequenceNode" else [value_node])
                continue
            key = self._scalar(key_node, self.at(key_node)) if type(key_node).__name__ == "ScalarNode" else None
            if not isinstance(key, str):
                raise RenderError([Finding("OVL-YAML", "mapping keys must be strings", self.at(key_node))])
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
            for key, value in self._mapping(source, path).items():
                result.setdefault(key, value)
        return result

    def _scalar(self, node: Any, here: Location) -> Any:
        tag = node.tag
        if tag in (_TAG + "str", _TAG + "timestamp"):
            return str(node.value)  # timestamps stay the text the user wrote
        if tag == _TAG + "null":
            return None
        if tag in (_TAG + "bool", _TAG + "int", _TAG + "float"):
            return self.constructor.construct_object(node)
        raise RenderError([Finding("OVL-YAML", f"unsupported YAML tag {tag}", here)])


def load_data_file(path: Path) -> Any:
    """Load a trusted data file shipped with cozy-render (catalogue, variant data) without positions."""
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


# Strings a YAML 1.1 reader (Go's sigs.k8s.io/yaml, used by kubectl, Argo CD and Flux) would not read
# back as the same string; they are always quoted on output.
_YAML11_AMBIGUOUS = re.compile(
    r"""^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
        |~|null|Null|NULL|
        [-+]?(?:0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)
        |[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
        |[-+]?[0-9]+(?:[eE][-+]?[0-9]+)?|=|<<)$""",
    re.X,
)


def _dumper():
    """libyaml's emitter (ruamel's C extension) fed by a representer that keeps our key order."""
    from ruamel.yaml import YAML
    from ruamel.yaml.representer import SafeRepresenter

    class _Representer(SafeRepresenter):
        def represent_str(self, data: str):
            style = None
            if "\n" in data and _literal_ok(data):
                style = "|"
            elif _YAML11_AMBIGUOUS.match(data):
                style = '"'
            return self.represent_scalar("tag:yaml.org,2002:str", data, style=style)

        def represent_dict(self, data: dict):
            return self.represent_mapping("tag:yaml.org,2002:map", data.items())

    _Representer.add_representer(str, _Representer.represent_str)
    _Representer.add_representer(dict, _Representer.represent_dict)
    y = YAML(typ="safe")
    y.Representer = _Representer
    y.default_flow_style = False
    y.allow_unicode = True
    y.width = 4096  # never fold long strings: a folded line is a diff nobody asked for
    return y


def _literal_ok(text: str) -> bool:
    """A literal block reproduces the string exactly only without trailing spaces or tabs."""
    return not any(line != line.rstrip(" \t") for line in text.split("\n")) and not text.startswith((" ", "\t"))


def dump_stream(objects: Iterable[dict[str, Any]]) -> str:
    """A `---`-separated YAML stream; key order is the order the objects were built in.

    ``renderer.emitter`` writes plain data without ruamel, to the same bytes; what it does not model
    exactly goes through the ruamel dumper below.
    """
    from renderer import emitter

    documents = list(objects)
    try:
        return emitter.dump_stream(documents)
    except emitter.Unsupported:
        return ruamel_dump_stream(documents)


def ruamel_dump_stream(documents: list[Any]) -> str:
    """The reference writer: ruamel's representer and libyaml's emitter (``_dumper``)."""
    buf = io.StringIO()
    _dumper().dump_all(documents, buf)
    return buf.getvalue()


def dump_one(obj: dict[str, Any]) -> str:
    return dump_stream([obj])


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
