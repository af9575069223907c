"""The YAML writer: one fixed dumper, so the same objects always give the same bytes.

``renderer.output.emitter`` writes plain data directly (fast); what it does not model exactly goes
through ruamel's representer and libyaml's emitter (``_dumper``), the reference both are tested
against. How a string reads back in YAML 1.1 (go-yaml: kubectl, Argo CD, Flux) is the loader's
knowledge (``renderer.load.yamlio.needs_double_quotes``).
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

from renderer.load.yamlio import literal_ok, needs_double_quotes


def _dumper():
    """libyaml's emitter (ruamel's C extension) fed by a representer that keeps our key order."""
    from ruamel.yaml import YAML
    from ruamel.yaml.representer import SafeRepresenter

    class _Representer(SafeRepresenter):
        def represent_str(self, data: str):
            style = None
            if "\n" in data and literal_ok(data):
                style = "|"
            elif needs_double_quotes(data):
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


def dump_stream(objects: Iterable[dict[str, Any]]) -> str:
    """A `---`-separated YAML stream; key order is the order the objects were built in.

    ``renderer.output.emitter`` writes plain data without ruamel, to the same bytes; what it does not model
    exactly goes through the ruamel dumper below.
    """
    from renderer.output import emitter

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


def display(obj: Any) -> str:
    """An object as the diffs show it (``diff``, ``diff --base``): keys sorted, as kubectl diff shows
    objects, written by ``dump_one`` (the render's writer, so YAML 1.1 quoting and literal blocks are
    the same in every install, whatever YAML libraries are importable; issue 31 item 5)."""
    return dump_one(_sorted_keys(obj))


def _sorted_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sorted_keys(node[k]) for k in sorted(node, key=str)}
    if isinstance(node, list):
        return [_sorted_keys(v) for v in node]
    return node
