"""The lookup fast path gives exactly what Jinja2 gives; everything else is Jinja2's."""

from __future__ import annotations

import pytest

from renderer.load import templating

CONTEXT = {"vars": {"domain": "example.org", "port": 443, "ratio": 1.5, "flag": True, "items": "x",
                    "nested": {"a": {"b": "deep"}}, "none": None, "_private": "p"},
           "cluster": {"name": "c1", "host": {"os": "apt"}}}

CASES = [
    "plain text",
    "{{ vars.domain }}",
    "https://api.{{ vars.domain }}:{{ vars.port }}/x",
    "{{vars.domain}}{{ cluster.name }}",
    "{{ vars.ratio }}",
    "{{ vars.flag }}",
    "{{ vars.nested.a.b }}",
    "{{ vars.nested }}",
    "{{ vars.none }}",
    "{{ vars.items }}",
    "{{ vars.domain | upper }}",
    "{{ vars.domain }} {% if vars.flag %}on{% endif %}",
    "{{- vars.domain -}}",
    "{{ vars._private }}",
]


def _outcome(render, source: str) -> str:
    try:
        return "ok: " + render(source)
    except templating.TemplateProblem as exc:
        return f"refused: {exc}"


@pytest.mark.parametrize("source", CASES)
def test_fast_path_matches_jinja2(source: str) -> None:
    expected = _outcome(lambda s: templating._compile(s).render(CONTEXT), source)
    assert _outcome(lambda s: templating.render_string(s, CONTEXT), source) == expected
    fast = templating._lookup_only(source, CONTEXT)
    assert fast is None or "ok: " + fast == expected


@pytest.mark.parametrize("source", ["{{ vars.none }}", "{{ vars.items }}", "{{ vars.nested.items() }}"])
def test_only_plain_values_leave_a_template(source: str) -> None:
    """A method or a dict view would print a heap address that differs on every run."""
    with pytest.raises(templating.TemplateProblem, match="only strings, numbers, booleans"):
        templating.render_string(source, CONTEXT)


def test_fast_path_covers_plain_lookups() -> None:
    assert templating._lookup_only("https://{{ vars.domain }}:{{ vars.port }}", CONTEXT) == "https://example.org:443"
    assert templating._lookup_only("{{ vars.flag }}", CONTEXT) is None
    assert templating._lookup_only("{{ vars.items }}", CONTEXT) is None


@pytest.mark.parametrize("source", ["{{ vars.missing }}", "{{ nothing.here }}", "{{ vars.domain.nope }}"])
def test_undefined_is_jinja2s_error(source: str) -> None:
    with pytest.raises(templating.TemplateProblem, match="undefined in template"):
        templating.render_string(source, CONTEXT)


def test_the_readme_lists_exactly_the_allowed_filters() -> None:
    import re

    from tests.conftest import REPO

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())  # wrapping aside
    paragraph = readme[readme.index("Filters: "):readme.index("(Jinja2's built-ins")]
    assert re.findall(r"`([a-z]+)`", paragraph) == templating.allowed_filters()
    assert "random" not in templating.allowed_filters()
    tests = readme[readme.index("Tests: "):readme.index("No globals")]
    assert re.findall(r"`([^`]+)`", tests) == templating.allowed_tests()
