"""The rule registry (renderer/rules/__init__.py): ordering, registration, and how hits become findings."""

from __future__ import annotations

import re

import pytest

import renderer.rules as rules_module
from renderer.errors import ERROR, WARNING
from renderer.rules import REGISTRY, Hit, all_rules, rule, run_rules
from tests.rules.test_package_rules import line_col, position, result_of


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> dict:
    """An empty registry with no modules to import, so a test registers exactly the rules it needs."""
    registry: dict = {}
    monkeypatch.setattr(rules_module, "REGISTRY", registry)
    monkeypatch.setattr(rules_module, "_MODULES", ())
    return registry


def test_all_rules_orders_by_prefix_then_number(scratch_registry: dict) -> None:
    for rule_id in ("ZZZ-10", "AAA-2", "ZZZ-2", "AAA-10", "ZZZ-1"):
        rule(rule_id, WARNING, "s", "e", ["src"])(lambda ctx: iter(()))
    assert list(all_rules()) == ["AAA-2", "AAA-10", "ZZZ-1", "ZZZ-2", "ZZZ-10"]


def test_a_rule_id_registers_once(scratch_registry: dict) -> None:
    rule("AAA-01", ERROR, "s", "e", ["src"])(lambda ctx: iter(()))
    with pytest.raises(ValueError, match="AAA-01 registered twice"):
        rule("AAA-01", ERROR, "s", "e", ["src"])(lambda ctx: iter(()))


def test_run_rules_locates_hits_and_applies_severity_overrides(scratch_registry: dict, repo) -> None:
    body = "platform:\n  variant: isp-full\npackages:\n  cozystack.kuberture: {variant: default}\n"
    result = result_of(repo, body)
    package = next(e for e in result.objects if e.name == "cozystack.kuberture")

    @rule("BBB-02", ERROR, "s", "e", ["src"])
    def second(ctx):
        yield Hit("in the object", package, ("spec", "variant"))
        yield Hit("downgraded", package, ("spec", "variant"), severity=WARNING)

    @rule("BBB-01", WARNING, "s", "e", ["src"])
    def first(ctx):
        yield Hit("at an overlay path", overlay_path=("platform", "variant"))
        yield Hit("nowhere in particular")

    findings = run_rules(result)
    assert [(f.code, f.severity, f.message) for f in findings] == [
        ("BBB-01", WARNING, "at an overlay path"),
        ("BBB-01", WARNING, "nowhere in particular"),
        ("BBB-02", ERROR, "in the object"),
        ("BBB-02", WARNING, "downgraded"),
    ]
    assert line_col(findings[0]) == position(body, "isp-full")
    assert findings[1].location == result.overlay.locate(())  # the overlay file itself
    assert line_col(findings[2]) == position(body, "default}")
    assert [f.code for f in run_rules(result, only=["BBB-02"])] == ["BBB-02", "BBB-02"]
    assert run_rules(result, only=[]) == []


def test_every_registered_rule_is_documented() -> None:
    registry = all_rules()
    assert {"PKG-01", "PKG-10", "PLT-01", "PLT-12"} <= set(registry)
    assert all(f"PKG-{n:02d}" in registry for n in range(1, 11))
    assert all(f"PLT-{n:02d}" in registry for n in range(1, 13))
    for rule_id, r in registry.items():
        assert re.fullmatch(r"[A-Z]+-\d{2}", rule_id), rule_id
        assert r.severity in (ERROR, WARNING), rule_id
        assert r.summary and "\n" not in r.summary, rule_id
        assert r.explanation and r.sources, rule_id
    assert REGISTRY is rules_module.REGISTRY
