"""renderer/diff/snapshot_yaml.py: a YAML snapshot is read as kubectl reads YAML, from libyaml's events."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from renderer.diff import snapshot_yaml
from renderer.output.yaml import dump_one

JSON_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
                | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
                | st.text(max_size=12))
JSON_DOCS = st.dictionaries(st.text(min_size=1, max_size=8), st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20), min_size=1, max_size=5)


@settings(derandomize=True, max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(doc=JSON_DOCS)
def test_yaml_written_for_kubectl_reads_back_as_its_json(doc: dict) -> None:
    """The same object as a YAML or a JSON snapshot is the same object: what the YAML writer the render
    uses (go-yaml compatible quoting) writes, the snapshot reader reads back exactly."""
    [(read, line)] = list(snapshot_yaml.documents(dump_one(doc)))
    assert json.dumps(read, sort_keys=True) == json.dumps(doc, sort_keys=True)
    assert line == 1


def test_plain_scalars_are_resolved_as_go_yaml_v2_resolves_them() -> None:
    text = ("a: y\nb: 'y'\nc: 12:30\nd: 2026-11-30T08:15:42Z\ne: 0x1f\nf: 010\ng: 1_000\nh: ~\ni: ''\nj: 1.5\n"
            "k: !!str 7\nl: yes\n")
    [(doc, _)] = list(snapshot_yaml.documents(text))
    assert doc == {"a": True, "b": "y", "c": "12:30", "d": "2026-11-30T08:15:42Z", "e": 31, "f": 8, "g": 1000,
                   "h": None, "i": "", "j": 1.5, "k": "7", "l": True}


def test_strings_of_other_scripts_digits_stay_strings() -> None:
    [(doc, _)] = list(snapshot_yaml.documents("a: 1\u0663\nb: \u00b2\n"))
    assert doc == {"a": "1\u0663", "b": "\u00b2"}


def test_keys_become_strings_as_sigs_k8s_io_yaml_makes_them() -> None:
    [(doc, _)] = list(snapshot_yaml.documents("on: 1\n2: b\n~: c\n"))
    assert doc == {"true": 1, "2": "b", "null": "c"}


def test_each_document_reports_the_line_its_root_starts_on() -> None:
    text = "---\na: 1\n---\n\n# a comment\nb: [1, 2]\n---\n"
    assert list(snapshot_yaml.documents(text)) == [({"a": 1}, 2), ({"b": [1, 2]}, 6)]


@pytest.mark.parametrize(("text", "message"), [
    ("a: &x [1]\nb: *x\n", "a YAML alias (or a recursive one): kubectl get output has none"),
    ("a: {<<: {b: 1}}\n", "a YAML merge key (<<): kubectl get output has none"),
    ("a: " + "9" * 30 + "\n", "an integer outside the int64/uint64 range"),
    ("a: .nan\n", "'.nan' (NaN or infinity) is not a JSON number"),
    ("a: !!python/object:os.system x\n", "unsupported YAML tag tag:yaml.org,2002:python/object:os.system"),
    ("a: !!set {x}\n", "unsupported YAML tag tag:yaml.org,2002:set"),
    ("a: !!int x\n", "'x' cannot be read as !!int"),
    ("? [a]\n: b\n", "a mapping or list as a mapping key"),
    ("a: " + "[" * 101 + "]" * 101 + "\n", "nested deeper than 100 levels"),
])
def test_what_kubectl_never_writes_is_refused_at_its_document(text: str, message: str) -> None:
    with pytest.raises(snapshot_yaml.Refused) as refused:
        list(snapshot_yaml.documents("---\n" + text))
    assert (refused.value.message, refused.value.line) == (message, 2)


def test_an_alias_bomb_is_refused_without_expanding_anything() -> None:
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join(["*" + chr(97 + i)] * 9) + "]\n" for i in range(9))
    with pytest.raises(snapshot_yaml.Refused, match="alias"):
        list(snapshot_yaml.documents(bomb))


def test_malformed_yaml_raises_the_parsers_own_error_with_its_mark() -> None:
    with pytest.raises(snapshot_yaml.parser_error()) as failed:
        list(snapshot_yaml.documents("a: [1, 2\nb: 3\n"))
    assert failed.value.problem_mark is not None  # type: ignore[attr-defined]


def test_without_pyyaml_ruamels_libyaml_gives_the_same_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    """The base install has no PyYAML: ruamel.yaml.clib's parser yields the same events."""
    text = dump_one({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y", "labels": {"on": "12:30"}},
         "data": {"n": "0x1f", "t": "2026-11-30T08:15:42Z", "multi": "a\nb\n"}}]})
    with_pyyaml = list(snapshot_yaml.documents(text))
    monkeypatch.setitem(__import__("sys").modules, "yaml", None)  # `import yaml` now raises ImportError
    with pytest.raises(ImportError):
        import yaml  # noqa: F401
    assert list(snapshot_yaml.documents(text)) == with_pyyaml
    with pytest.raises(snapshot_yaml.parser_error()):
        list(snapshot_yaml.documents("a: [1\n"))
