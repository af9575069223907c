"""Seeded fuzzing of the loader, the layer merge and templating (issue 12): whatever the input, the
answer is a result or a RenderError/TemplateProblem with a location, never another exception.

Derandomised (the same examples on every run) and bounded, so CI time stays flat; a crash this finds
becomes a case in tests/cases/invalid/.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from renderer.errors import RenderError
from renderer.load import limits, templating
from renderer.load.overlay import APPEND_SUFFIX, merge_layer
from renderer.load.yamlio import KEY, load_documents

FUZZ = settings(derandomize=True, max_examples=300, deadline=None, database=None,
                phases=[Phase.explicit, Phase.generate, Phase.shrink],
                suppress_health_check=[HealthCheck.too_slow])

# Pieces of YAML, good and bad, glued at random: indentation, flow and block collections, anchors and
# aliases, merge keys, tags, quotes, escapes, documents, odd characters.
TOKENS = st.sampled_from([
    "a", "b", "k", ":", ": ", "- ", "\n", "\n  ", "\n    ", "  ", "{", "}", "[", "]", ",", "&a ", "*a", "&b ", "*b",
    "<<: ", "!!int ", "!!str ", "!!float ", "!!bool ", "!!null ", "!!set ", "!!python/object:x ", "!t ", "'", '"',
    "\\u00e9", "\\ud800", "\\x00", "#", "---\n", "...\n", "|\n  ", ">\n  ", "? ", "%YAML 1.1\n", "12:30", "yes",
    "0x1F", "0o7", "1e400", ".nan", "-.inf", "9" * 30, "~", "null", "\t", "\x00", "\x07", "\ufeff", "é", "日本",
])
YAML_TEXT = st.lists(TOKENS, max_size=40).map("".join)


@FUZZ
@given(text=YAML_TEXT, yaml11=st.booleans())
def test_loader_gives_data_or_a_located_refusal(text: str, yaml11: bool) -> None:
    limits.start()
    try:
        docs = load_documents(text, "f.yaml", yaml11=yaml11)
    except RenderError as exc:
        assert exc.findings and all(f.location and f.location.line >= 1 for f in exc.findings), exc
        return
    for data, locs in docs:
        assert () in locs
        _plain(data)


def _plain(value: Any) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str)
            _plain(v)
    elif isinstance(value, list):
        for v in value:
            _plain(v)
    else:
        assert value is None or isinstance(value, (str, int, float, bool))
        assert value == value, "NaN left the loader"


KEYS = st.sampled_from(["a", "b", "c", "a+", "b+", "vars", "x"])
LEAF = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["s", "t", ""]))
VALUE = st.recursive(LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(KEYS, inner, max_size=3)), max_leaves=12)
LAYER = st.dictionaries(KEYS, VALUE, max_size=4)


def _locs_for(data: Any, path: tuple[Any, ...], tag: str, out: dict) -> dict:
    out[path] = tag
    if isinstance(data, dict):
        for k, v in data.items():
            out[path + (k, KEY)] = tag
            _locs_for(v, path + (k,), tag, out)
    elif isinstance(data, list):
        for i, v in enumerate(data):
            _locs_for(v, path + (i,), tag, out)
    return out


def _reference(base: dict, layer: dict, keep_null: bool = False) -> dict:
    """The merge rules of the README, written plainly. A value new to the merge is merged into an empty
    one by the same rules (``key+`` is ``key``, so a later layer appends to it), except that a ``null``
    inside it is kept: ``keep_null``."""
    out = dict(base)
    for raw, value in layer.items():
        append = raw.endswith(APPEND_SUFFIX) and isinstance(value, list)
        key = raw[:-1] if append else raw
        if value is None and not keep_null:
            out.pop(key, None)
        elif append:
            out[key] = (list(out[key]) if isinstance(out.get(key), list) else []) + [_new(v) for v in value]
        elif isinstance(value, dict) and isinstance(out.get(key), dict) and not keep_null:
            out[key] = _reference(out[key], value)
        else:
            out[key] = _new(value)
    return out


def _new(value: Any) -> Any:
    if isinstance(value, dict):
        return _reference({}, value, keep_null=True)
    if isinstance(value, list):
        return [_new(v) for v in value]
    return value


@FUZZ
@given(layers=st.lists(LAYER, min_size=1, max_size=4))
def test_merge_follows_the_documented_rules_and_keeps_every_position(layers: list[dict]) -> None:
    merged: dict = {}
    locs: dict = {}
    expected: dict = {}
    for n, layer in enumerate(layers):
        merge_layer(merged, locs, layer, _locs_for(layer, (), f"layer{n}", {}))
        expected = _reference(expected, layer)
    assert merged == expected
    stack: list[tuple[Any, tuple[Any, ...]]] = [(merged, ())]
    while stack:
        node, path = stack.pop()
        if path:
            assert path in locs, f"no position for {path}"
        if isinstance(node, dict):
            stack.extend((v, path + (k,)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(node))
    for path in locs:  # and no position of a value that is gone (explain would print it as null)
        node = merged
        for part in path[:-1] if path and path[-1] is KEY else path:
            assert isinstance(node, (dict, list)), f"stale position {path}"
            in_list = isinstance(node, list) and isinstance(part, int) and part < len(node)
            assert in_list or (isinstance(node, dict) and part in node), f"stale position {path}"
            node = node[part]


PIECES = st.sampled_from([
    "{{ ", " }}", "{% ", " %}", "vars.s", "vars.n", "vars.l", "vars.d", "cluster.name", "vars.items", "x",
    " ~ ", " + ", " * ", " ** ", " % ", " // ", "9", "999", "100000", "'x'", "'%09d'", "'{:09}'", "(", ")",
    "[", "]", ",", "|upper", "|center(", "|format(", "|replace('x', 'yy')", "|list", "|join", "|random",
    "|indent(", "|batch(", "|tojson", "|default(1)", ".ljust(", ".format(", "for a in vars.s", "endfor", "if ",
    "endif", "set z = ", "macro m()", "endmacro", "m()", "loop", "none", "range(3)", ".__class__", "\n",
])
TEMPLATE = st.lists(PIECES, max_size=14).map("".join)
CONTEXT = {"vars": {"s": "abc", "n": 5, "l": [1, 2], "d": {"k": "v"}}, "cluster": {"name": "c1"}}


@FUZZ
@given(source=TEMPLATE)
def test_templates_render_or_are_refused(source: str) -> None:
    limits.start()
    try:
        result = templating.render_string(source, CONTEXT)
    except templating.TemplateProblem as exc:
        assert str(exc)
        return
    assert isinstance(result, str) and len(result) <= limits.MAX_TEMPLATE_OUTPUT
    assert " object at 0x" not in result, "a heap address left a template"


# --- messages (issue 25 item 10) ---------------------------------------------------------------------------

@FUZZ
@given(st.text(max_size=400), st.text(max_size=400))
def test_every_finding_prints_as_one_line_in_every_format(path: str, message: str) -> None:
    """Whatever a path or message holds, a finding is one text line and one GitHub workflow command, with
    no control character left raw and nothing a reader could take for a second command."""
    import json

    from renderer import report
    from renderer.errors import Finding, Location
    from renderer.escape import quote

    finding = Finding("OVL-YAML", message + " " + quote(path), Location(path, 1, 2))
    for text in (finding.format() + "\n", report.github_annotation(finding)):
        assert text.count("\n") == 1 and text.endswith("\n")
        assert not any(ord(c) < 0x20 and c != "\n" for c in text)
    assert report.github_annotation(finding).startswith("::error file=")
    assert json.loads(json.dumps(finding.as_dict()))["file"] == path
