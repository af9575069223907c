"""renderer.output.emitter writes exactly what the ruamel dumper (``renderer.output.yaml.ruamel_dump_stream``) writes.

The reference is ruamel's representer plus libyaml's emitter with cozy-render's settings; the fast
emitter must give the same bytes on every sample cluster (without falling back), on seeded random
plain data built from the strings that steer libyaml's scalar styles, and it must hand everything it
does not model to ruamel rather than guess.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode

from renderer.output import directory_files, emitter
from renderer.output.yaml import dump_stream, ruamel_dump_stream
from tests.conftest import OVERLAYS
from tests.helpers import render

SAMPLES = sorted(p.parent for p in (OVERLAYS / "clusters").glob("*/cluster.yaml"))

# Strings around every branch of libyaml's scalar analysis and of the YAML 1.1/1.2 resolvers.
ATOMS = [
    "", " ", "a", "b c", "yes", "no", "on", "true", "True", "null", "~", "0", "007", "0o17", "0x1F", "1_000",
    "1e3", "1.5", ".5", "-", "--", "---", "...", "---a", "...b", "-a", "- a", "?", "? a", "?a", ":", ": a", "a:",
    "a: b", "a:b", "#", "a #b", "a#b", "'", '"', "'a'", "a'b", '"a"', "\\", "a\\b", "\t", "a\tb", "\n", "a\n",
    "a\nb", "a\nb\n", "a\n\nb", "a\nb\n\n", " a", "a ", "a \nb", "a\n b", "\x00", "\x07", "\x1b", "\x85", "\xa0",
    "é", "日本", "\U0001f600", "\ufeff", "\u2028", "2024-01-01", "2024-1-1 10:00:00", "<<", "=", "!", "&", "*",
    "&a", "*a", "!a", "|", ">", "%", "@", "`", ",", "[", "]", "{", "}", "a,b", "a[b]", "{a}", "-1", "+1", "+",
    ".inf", ".nan", "-.inf", "0b101", "12:30", "1:20:30", "x" * 130, "y" * 5000, "z " * 2100, "Y", "n", "NO",
    "Off", "0.", "+.5", "_", "+_", "a\r", "\r\n", "#a", "a: ", "a :b", "a\x7f", "\x9f", "\ue000", "\ufffe",
    "a\tb\nc", "line1\n  indented\nline3\n", "v1", "10.244.0.0/16", "https://api.x:443", "app.kubernetes.io/name",
]
SCALARS: list[Any] = [0, -7, 10**20, True, False, None, 0.5, -2.25, 1.0, 1e17, 1e-05, float("inf"), 3.14159]


def _string(r: random.Random) -> str:
    roll = r.random()
    if roll < 0.5:
        return r.choice(ATOMS)
    if roll < 0.8:
        return "".join(r.choice(ATOMS) for _ in range(r.randint(1, 3)))
    return "".join(r.choice("ab :#-?'\"\n\t .,[]{}!&*|>%@`0123456789eE+_~") for _ in range(r.randint(0, 8)))


def _node(r: random.Random, depth: int) -> Any:
    roll = r.random()
    if depth > 3 or roll < 0.5:
        return _string(r) if r.random() < 0.75 else r.choice(SCALARS)
    if roll < 0.75:
        return {_string(r): _node(r, depth + 1) for _ in range(r.randint(0, 4))}
    return [_node(r, depth + 1) for _ in range(r.randint(0, 4))]


def _same_as_ruamel(documents: list[Any]) -> bool | None:
    """True when both agree, None when the fast emitter declines."""
    try:
        fast = emitter.dump_stream(documents)
    except emitter.Unsupported:
        return None
    assert fast == ruamel_dump_stream(documents), repr(documents)
    return True


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_sample_is_written_without_ruamel_and_to_the_same_bytes(sample: Path) -> None:
    objects = render(sample).manifests
    assert emitter.dump_stream(objects) == ruamel_dump_stream(objects)
    for obj in objects:
        assert emitter.dump_stream([obj]) == ruamel_dump_stream([obj])
    assert "".join(directory_files(objects).values())  # the --out path goes through the same writer


def test_each_string_in_every_position_matches_ruamel() -> None:
    r = random.Random(13)
    agreed = 0
    for _ in range(2500):
        s = _string(r)
        for doc in ({"k": s}, {s: "v"}, [s], {"k": [s, {"a": s}]}, {"k": {"x": [[s]]}}):
            agreed += bool(_same_as_ruamel([doc]))
    assert agreed > 10_000  # most cases are modelled, not handed to ruamel


def test_random_documents_match_ruamel() -> None:
    r = random.Random(7)
    agreed = 0
    for _ in range(1500):
        docs = [{_string(r): _node(r, 0) for _ in range(r.randint(1, 4))} for _ in range(r.randint(1, 3))]
        agreed += bool(_same_as_ruamel(docs))
    assert agreed > 150


def test_scalars_of_every_type_match_ruamel() -> None:
    for value in SCALARS + ATOMS:
        for doc in ({"k": value}, [value, [value]], {"a": {"b": [value, {"c": value}]}}):
            _same_as_ruamel([doc])


def test_string_resolution_follows_ruamel_yaml_1_2_resolvers() -> None:
    resolver = YAML(typ="safe").resolver
    corpus = [a for a in ATOMS if a and "\n" not in a] + [
        "0o7", "0b", "0x", "+0x1", "1__2", "-.5e+3", ".5e3", "1e+3", "1E3", "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10", "2001-12-14", "2001-1-1", "NULL", "Null", "nULL", "FALSE", "fAlse", ".Inf",
        "+.INF", ".NaN", "-.nan", "0.0.1", "1.2.3", "v1.2", "1-2", "12e", "=", "==", "<", "<<<"]
    for s in corpus:
        by_ruamel = str(resolver.resolve(ScalarNode, s, (True, False))) != "tag:yaml.org,2002:str"
        by_emitter = emitter._resolves_non_str(s)
        assert by_emitter == by_ruamel, s


@pytest.mark.parametrize("documents", [
    [{"a": (shared := {"x": 1}), "b": shared}],  # ruamel writes an anchor and an alias
    [{"k": "z " * 2100}],  # libyaml folds lines longer than the width
    [{"x" * 130: 1}],  # a key longer than 128 bytes is written `? key`
    [{"k": "a\n\n"}],  # keep chomping
    [{1: "int key"}],
    [{"k": (1, 2)}],
], ids=["shared", "fold", "long-key", "keep", "int-key", "tuple"])
def test_what_the_emitter_does_not_model_goes_to_ruamel(documents: list[Any]) -> None:
    with pytest.raises(emitter.Unsupported):
        emitter.dump_stream(documents)
    try:
        expected = ruamel_dump_stream(documents)
    except Exception:  # noqa: BLE001 - ruamel refuses some types; then so does dump_stream
        with pytest.raises(Exception):  # noqa: B017
            dump_stream(documents)
        return
    assert dump_stream(documents) == expected



def test_the_resolver_check_answers_as_the_patterns() -> None:
    """_resolves_non_str compiles the patterns only for text starting like a number (issue 24), and
    answers as ruamel's resolver does: its patterns, looked up by the text's first character."""
    import re

    from tests.helpers import scalar_corpus

    pattern = re.compile(emitter._RESOLVES_NON_STR_PATTERN, re.X)
    first = "tTfF-+0123456789.<~nN=!&*"  # ruamel/yaml/resolver.py: the first characters of each (1, 2) entry
    for text in scalar_corpus(sorted(emitter._RESOLVER_WORDS)):
        expected = bool(text) and text[0] in first and pattern.fullmatch(text) is not None
        assert emitter._resolves_non_str(text) == expected, repr(text)

@pytest.mark.parametrize("text", ["a\rb", "a\x85", "\u2028", "x\u2029", "plain", "caf\u00e9\n"])
def test_other_line_breaks(text: str) -> None:
    assert emitter._other_break(text) == any(ch in text for ch in "\r\x85\u2028\u2029")
