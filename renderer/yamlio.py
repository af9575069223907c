"""The only place that builds ruamel.yaml instances.

Overlay and manifest files are read round-trip so every value keeps its line and column; the
loaded tree is turned into plain Python data plus a map ``path -> Location``. Output is written
with one fixed dumper so the same objects always give the same bytes.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any, Iterable

from renderer.errors import Location, RenderError, Finding

MAX_FILE_BYTES = 4 * 1024 * 1024
# A plain-data node budget per file: stops alias bombs ("billion laughs"), which are tiny on disk
# and explode only when the shared nodes are walked.
MAX_NODES = 200_000

Path_ = tuple[Any, ...]
Locations = dict[Path_, Location]
# ``locs[path + (KEY,)]`` is where the mapping key of ``path`` is written (values point at the value).
KEY = None


def _yaml(version: tuple[int, int] | None = None):  # noqa: ANN202 - ruamel types are untyped
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import RoundTripConstructor

    class _Constructor(RoundTripConstructor):
        """Round-trip constructor that keeps timestamps as the text the user wrote."""

    _Constructor.add_constructor(
        "tag:yaml.org,2002:timestamp", RoundTripConstructor.construct_yaml_str
    )
    y = YAML(typ="rt")
    y.Constructor = _Constructor
    y.allow_duplicate_keys = False
    if version:
        y.version = version
    return y


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
    """Parse a (multi-document) YAML text into plain data with positions; empty documents are dropped."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    y = _yaml((1, 1) if yaml11 else None)
    out: list[tuple[Any, Locations]] = []
    try:
        for doc in y.load_all(text):
            if doc is None:
                continue
            locs: Locations = {}
            budget = [MAX_NODES]
            data = _plain(doc, (), locs, display, budget, Location(display, 1, 1))
            out.append((data, locs))
    except RenderError:
        raise
    except MarkedYAMLError as exc:
        problem = exc.problem or str(exc).splitlines()[0]
        raise RenderError([Finding("OVL-YAML", f"invalid YAML: {problem}", _mark_location(exc, display))]) from None
    except YAMLError as exc:
        raise RenderError([Finding("OVL-YAML", f"invalid YAML: {exc}", Location(display))]) from None
    except RecursionError:
        raise RenderError([Finding("OVL-LIMIT", "YAML nesting is too deep", Location(display))]) from None
    return out


def _plain(node: Any, path: Path_, locs: Locations, display: str, budget: list[int], here: Location) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    budget[0] -= 1
    if budget[0] < 0:
        raise RenderError(
            [Finding("OVL-LIMIT", f"document expands to more than {MAX_NODES} nodes (YAML alias bomb?)", here)]
        )
    locs[path] = here
    if isinstance(node, CommentedMap) or isinstance(node, dict):
        result: dict[str, Any] = {}
        lc = getattr(node, "lc", None)
        for key, value in node.items():
            where = key_at = here
            if lc is not None:
                try:
                    kl, kc = lc.key(key)
                    where = key_at = Location(display, kl + 1, kc + 1)
                    if not isinstance(value, (dict, list)):
                        vl, vc = lc.value(key)
                        where = Location(display, vl + 1, vc + 1)
                except (KeyError, TypeError):
                    pass
            if not isinstance(key, str):
                raise RenderError([Finding("OVL-YAML", f"mapping keys must be strings, got {key!r}", where)])
            locs[path + (key, KEY)] = key_at
            result[key] = _plain(value, path + (key,), locs, display, budget, where)
        return result
    if isinstance(node, CommentedSeq) or isinstance(node, list):
        items = []
        lc = getattr(node, "lc", None)
        for i, value in enumerate(node):
            where = here
            if lc is not None:
                try:
                    il, ic = lc.item(i)
                    where = Location(display, il + 1, ic + 1)
                except (KeyError, TypeError, IndexError):
                    pass
            items.append(_plain(value, path + (i,), locs, display, budget, where))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        # ruamel's ScalarBoolean subclasses int; bool() above catches real bools only.
        if type(node).__name__ == "ScalarBoolean":
            return bool(node)
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    raise RenderError([Finding("OVL-YAML", f"unsupported YAML value of type {type(node).__name__}", here)])


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


def _dumpable(value: Any) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

    if isinstance(value, dict):
        return {k: _dumpable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dumpable(v) for v in value]
    if isinstance(value, str):
        if "\n" in value and not value.startswith((" ", "\t")) and all(
            line == line.rstrip() for line in value.split("\n")
        ):
            return LiteralScalarString(value)
        if _YAML11_AMBIGUOUS.match(value):
            return DoubleQuotedScalarString(value)
    return value


def dump_stream(objects: Iterable[dict[str, Any]]) -> str:
    """A `---`-separated YAML stream; key order is the order the objects were built in."""
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096
    y.representer.add_representer(
        type(None), lambda r, _d: r.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    buf = io.StringIO()
    y.dump_all([_dumpable(o) for o in objects], buf)
    return buf.getvalue()


def dump_one(obj: dict[str, Any]) -> str:
    return dump_stream([obj])


def display_path(path: Path, base: Path | None = None) -> str:
    """Path as shown in messages: relative to the working directory when it lies below it."""
    base = base or Path.cwd()
    try:
        return os.path.relpath(path, base) if str(path).startswith(str(base)) else str(path)
    except ValueError:
        return str(path)
