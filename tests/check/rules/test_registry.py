"""The rule registry (renderer/check/rules/__init__.py): ordering, registration, and how hits become findings."""

from __future__ import annotations

import re
import sys
import types

import pytest

from renderer.check.rules import RULE_MODULES, Hit, all_rules, collect_rules, rule, run_rules
from renderer.errors import ERROR, WARNING
from renderer.registry import entries
from tests.check.rules.test_package_rules import line_col, position, result_of


@pytest.fixture
def scratch_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """An empty rule module, so a test declares exactly the rules it needs."""
    module = types.ModuleType("tests.scratch_rules")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module


def declare(module: types.ModuleType, rule_id: str, severity: str = WARNING, check=None):
    fn = check or (lambda ctx: iter(()))
    fn = rule(rule_id, severity, "s", "e", ["src"])(fn)
    setattr(module, f"check_{rule_id.replace('-', '_')}", fn)
    return fn


def test_collect_rules_orders_by_prefix_then_number(scratch_module: types.ModuleType) -> None:
    for rule_id in ("ZZZ-10", "AAA-2", "ZZZ-2", "AAA-10", "ZZZ-1"):
        declare(scratch_module, rule_id)
    assert list(collect_rules([scratch_module.__name__])) == ["AAA-2", "AAA-10", "ZZZ-1", "ZZZ-2", "ZZZ-10"]


def test_a_rule_id_is_declared_once(scratch_module: types.ModuleType) -> None:
    declare(scratch_module, "AAA-01")
    scratch_module.again = rule("AAA-01", ERROR, "s", "e", ["src"])(lambda ctx: iter(()))
    with pytest.raises(ValueError, match="AAA-01 declared twice"):
        collect_rules([scratch_module.__name__])


def test_the_registry_is_the_declared_modules_and_nothing_else(scratch_module: types.ModuleType) -> None:
    declare(scratch_module, "ZZZ-99")  # declaring a rule registers nothing by itself
    assert "ZZZ-99" not in all_rules()
    assert set(all_rules()) == set(collect_rules(RULE_MODULES))
    assert {r.check.__module__ for r in all_rules().values()} == set(RULE_MODULES)


def test_deferred_rules_exist() -> None:
    registry = all_rules()
    for r in registry.values():
        assert set(r.deferred_to) <= set(registry), r.id
    assert registry["PLT-03"].deferred_to == ("GPU-03",)


def test_run_rules_locates_hits_and_applies_severity_overrides(scratch_module: types.ModuleType, repo) -> None:
    body = "platform:\n  variant: isp-full\npackages:\n  cozystack.kuberture: {variant: default}\n"
    result = result_of(repo, body)
    package = next(e for e in result.objects if e.name == "cozystack.kuberture")

    def second(ctx):
        yield Hit("in the object", package, ("spec", "variant"))
        yield Hit("downgraded", package, ("spec", "variant"), severity=WARNING)

    def first(ctx):
        yield Hit("at an overlay path", overlay_path=("platform", "variant"))
        yield Hit("nowhere in particular")

    declare(scratch_module, "BBB-02", ERROR, second)
    declare(scratch_module, "BBB-01", WARNING, first)
    registry = collect_rules([scratch_module.__name__])
    findings = run_rules(result, registry=registry)
    assert [(f.code, f.severity, f.message) for f in findings] == [
        ("BBB-01", WARNING, "at an overlay path"),
        ("BBB-01", WARNING, "nowhere in particular"),
        ("BBB-02", ERROR, "in the object"),
        ("BBB-02", WARNING, "downgraded"),
    ]
    assert line_col(findings[0]) == position(body, "isp-full")
    assert findings[1].location == result.overlay.locate(())  # the overlay file itself
    assert line_col(findings[2]) == position(body, "default}")
    assert [f.code for f in run_rules(result, only=["BBB-02"], registry=registry)] == ["BBB-02", "BBB-02"]
    assert run_rules(result, only=[], registry=registry) == []


def test_every_registered_rule_is_documented() -> None:
    registry = all_rules()
    assert {"PKG-01", "PKG-10", "PLT-01", "PLT-12"} <= set(registry)
    assert all(f"PKG-{n:02d}" in registry for n in range(1, 11))
    assert all(f"PLT-{n:02d}" in registry for n in range(1, 14) if n != 9)  # PLT-09 is diff's (live state)
    assert "PLT-09" in entries() and "PLT-09" not in registry
    for rule_id, r in registry.items():
        assert re.fullmatch(r"[A-Z]+-\d{2}", rule_id), rule_id
        assert r.severity in (ERROR, WARNING), rule_id
        assert r.summary and "\n" not in r.summary, rule_id
        assert r.explanation and r.sources, rule_id
    assert set(registry) <= set(entries())
