"""YAML in and out: positions, YAML 1.1 vs 1.2 reading, and output every Kubernetes tool reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.errors import RenderError
from renderer.load.limits import MAX_DEPTH
from renderer.load.yamlio import KEY, load_documents
from renderer.output.yaml import dump_stream

TRICKY = {
    "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
    "data": {"port": "7445", "yes": "yes", "on": "on", "y": "y", "n": None, "float": "1.5", "oct": "0o17",
             "hex": "0x1F", "date": "2001-01-01", "colon": "a: b", "dash": "- x", "empty": "", "multi": "l1\nl2\n",
             "trailing": "a \nb", "unicode": "ünï", "sexagesimal": "1:20", "tilde": "~", "bools": [True, False]},
}


@pytest.mark.parametrize("yaml11", [False, True])
def test_output_reads_back_identically_in_yaml_1_1_and_1_2(yaml11: bool) -> None:
    text = dump_stream([TRICKY, TRICKY])
    assert [d for d, _ in load_documents(text, "x", yaml11=yaml11)] == [TRICKY, TRICKY]


def test_output_keeps_key_order_and_uses_literal_blocks() -> None:
    text = dump_stream([{"kind": "K", "apiVersion": "v1", "data": {"z": "1", "a": "l1\nl2\n"}}])
    assert text == 'kind: K\napiVersion: v1\ndata:\n  z: "1"\n  a: |\n    l1\n    l2\n'


def test_yaml_1_1_reading_for_manifests() -> None:
    ((data, _),) = load_documents("a: yes\nb: on\nc: 'yes'\n", "m.yaml", yaml11=True)
    assert data == {"a": True, "b": True, "c": "yes"}
    ((data, _),) = load_documents("a: yes\nb: on\n", "o.yaml")
    assert data == {"a": "yes", "b": "on"}


def test_positions_of_values_and_keys() -> None:
    ((_data, locs),) = load_documents("a:\n  b: [1, 2]\n  c: x\n", "f.yaml")
    assert str(locs[("a", "c")]) == "f.yaml:3:6"
    assert str(locs[("a", "c", KEY)]) == "f.yaml:3:3"
    assert str(locs[("a", "b", 1)]) == "f.yaml:2:10"


def test_timestamps_stay_text_and_merge_keys_work() -> None:
    ((data, _),) = load_documents("base: &b {x: 1, y: 2}\nd: 2001-12-14\nm:\n  <<: *b\n  y: 3\n", "f.yaml")
    assert data["d"] == "2001-12-14" and data["m"] == {"x": 1, "y": 3}


@pytest.mark.parametrize("text, message", [
    ("a: !!python/object:os.system x\n", "unsupported YAML tag"),
    ("a: 1\na: 2\n", "duplicate key 'a'"),
    ("? [1, 2]\n: x\n", "mapping keys must be strings"),
    ("a: [1, 2\n", "invalid YAML"),
    ("a: *nope\n", "invalid YAML"),
])
def test_refused_yaml(text: str, message: str) -> None:
    with pytest.raises(RenderError) as info:
        load_documents(text, "f.yaml")
    (finding,) = info.value.findings
    assert message in finding.message and finding.location.path == "f.yaml" and finding.location.line >= 1


def test_deep_nesting_is_refused_before_libyaml_recurses() -> None:
    text = "a: " + "[" * 50_000 + "]" * 50_000 + "\n"
    with pytest.raises(RenderError) as info:
        load_documents(text, "deep.yaml")
    (finding,) = info.value.findings
    assert finding.code == "OVL-LIMIT" and f"deeper than {MAX_DEPTH} levels" in finding.message
    assert str(finding.location).startswith("deep.yaml:1:")


def test_alias_chains_and_self_references_are_refused() -> None:
    chain = "x0: &x0 [1]\n" + "".join(f"x{i}: &x{i} [*x{i - 1}]\n" for i in range(1, 2000))
    with pytest.raises(RenderError) as info:
        load_documents(chain, "chain.yaml")
    assert info.value.findings[0].code == "OVL-LIMIT"


def test_display_path_is_relative_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer.load.yamlio import display_path

    repo = tmp_path / "repo"
    (repo / "clusters" / "c1").mkdir(parents=True)
    monkeypatch.chdir(repo / "clusters" / "c1")
    assert display_path(repo / "clusters" / "c1" / "cluster.yaml") == "cluster.yaml"
    assert display_path(repo / "base" / "cluster.yaml") == "../../base/cluster.yaml"
    assert display_path(repo / "clusters" / "c10" / "x.yaml") == "../c10/x.yaml"  # not a prefix match on "c1"
    assert display_path(Path("/opt/elsewhere/x.yaml")) == "/opt/elsewhere/x.yaml"  # shares only "/"
    assert display_path(repo / "base" / "b.yaml", base=repo) == "base/b.yaml"


def test_display_relative_to_sets_the_base_for_a_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cmp generate: paths relative to the repository root, whatever the cmp-server's working directory."""
    from renderer.load.yamlio import display_path, display_relative_to

    root = tmp_path / "_cmp_server" / "1a2b"
    (root / "overlays" / "clusters" / "c1").mkdir(parents=True)
    monkeypatch.chdir(root / "overlays" / "clusters" / "c1")
    base = root / "overlays" / "base" / "cluster.yaml"
    with display_relative_to(root):
        assert display_path(base) == "overlays/base/cluster.yaml"
        with pytest.raises(RenderError):
            load_documents("a: [\n", display_path(base))
    assert display_path(base) == "../../base/cluster.yaml"  # restored after the block, even after an error


@pytest.mark.parametrize("text, value", [
    ("12:30", "12:30"), ("yes", True), ("Off", False), ("y", True), ("0755", 493), ("0o17", 15), ("0x1F", 31),
    ("-0b101", -5), ("1_000", 1000), ("08", 8), ("1e3", 1000), ("100.0", 100), ("1.5", 1.5), ("1e400", "1e400"),
    ("9" * 30, float("9" * 30)), ("2001-12-14", "2001-12-14"), ("~", None), ("NuLL", "NuLL"), ("0x1.8p1", "0x1.8p1"),
])
def test_manifest_scalars_read_as_go_yaml_v2_then_json(text: str, value: object) -> None:
    """What `kubectl label --local -o json` shows (tests/load/test_kubectl_scalars.py checks it against kubectl)."""
    ((data, _),) = load_documents(f"v: {text}\n", "m.yaml", yaml11=True)
    assert data["v"] == value and type(data["v"]) is type(value)


def test_a_merge_does_not_take_the_positions_of_explicit_keys() -> None:
    ((data, locs),) = load_documents("base: &b {a: 1, b: 2}\nx:\n  a: 9\n  <<: *b\n", "f.yaml")
    assert data["x"] == {"a": 9, "b": 2}
    assert (locs[("x", "a")].line, locs[("x", "b")].line) == (3, 1)



def test_needs_double_quotes_answers_as_the_whole_pattern() -> None:
    """needs_double_quotes runs the pattern only for text starting like a number (issue 24); over words,
    numbers, timestamps and random text it answers as the pattern alone would."""
    from renderer.load import yamlio
    from tests.helpers import scalar_corpus

    pattern = yamlio._YAML11_AMBIGUOUS
    for text in scalar_corpus(sorted(yamlio._YAML11_WORDS)):
        expected = pattern.match(text) is not None or (bool(text) and not isinstance(yamlio.go_resolve(text), str))
        assert yamlio.needs_double_quotes(text) == expected, repr(text)

@pytest.mark.parametrize("text, lone", [("plain", False), ("caf\u00e9 \u2603 \U0001f600", False),
                                        ("a\ud800b", True), ("\udfff", True)])
def test_lone_surrogates_are_what_utf_8_cannot_encode(text: str, lone: bool) -> None:
    from renderer.load import yamlio

    assert yamlio._lone_surrogate(text) is lone
