"""renderer.lazyre: a pattern compiled on first use answers exactly as re.compile's."""

from __future__ import annotations

import re

import pytest

from renderer.lazyre import LazyPattern, lazy

CASES = [(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?", 0, ["1.5e3", "x", "-.5", "12abc", ""]),
         (r"""^(?:y|yes # a comment
              |on)$""", re.X, ["y", "yes", "on", "no", "yes\n"]),
         ("[\ud800-\udfff]", 0, ["a\ud800b", "plain"])]


@pytest.mark.parametrize(("pattern", "flags", "texts"), CASES)
def test_a_lazy_pattern_answers_as_the_compiled_one(pattern: str, flags: int, texts: list[str]) -> None:
    compiled, deferred = re.compile(pattern, flags), lazy(pattern, flags)
    for text in texts:
        for method in ("match", "fullmatch", "search"):
            want, got = getattr(compiled, method)(text), getattr(deferred, method)(text)
            assert (want and want.group(), want and want.span()) == (got and got.group(), got and got.span())
        assert compiled.findall(text) == deferred.findall(text)
        assert compiled.sub("<>", text) == deferred.sub("<>", text)
    assert deferred.pattern == pattern and deferred.flags == flags


def test_nothing_is_compiled_before_first_use() -> None:
    deferred = LazyPattern(r"never-used-\d+")
    assert set(vars(deferred)) == {"pattern", "flags"}
    assert deferred.fullmatch("never-used-12")
    assert "fullmatch" in vars(deferred)  # kept: later calls skip __getattr__
