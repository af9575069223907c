"""Every registered rule has golden CLI cases (issue 5: "at least one failing and one passing case").

For rule ID this requires, under tests/cases/:
- ``<id>-fail*``: a case whose ``stderr`` expectations hold the full finding line
  ``file:line:col: <severity>[ID]: message``, at least one of them with the rule's registered severity;
- ``<id>-pass*``: a ``check -o json`` case exiting 0 whose golden reports no ID finding.
tests/test_cases.py runs the cases; this file only keeps the set complete as rules are added.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from renderer.check.rules import all_rules

CASES = Path(__file__).parent / "cases"



def _spec(case: Path) -> dict:
    return YAML(typ="safe").load((case / "case.yaml").read_text())


def _cases(rule_id: str, kind: str) -> list[Path]:
    return sorted(p for p in CASES.glob(f"{rule_id.lower()}-{kind}*") if (p / "case.yaml").is_file())


def _finding_line(rule_id: str, severity: str) -> re.Pattern[str]:
    return re.compile(rf"^\S+:\d+:\d+: {severity}\[{re.escape(rule_id)}\]: \S")


RULES = all_rules()


@pytest.mark.parametrize("rule_id", list(RULES))
def test_rule_has_a_failing_case(rule_id: str) -> None:
    cases = _cases(rule_id, "fail")
    assert cases, f"no tests/cases/{rule_id.lower()}-fail*/ case for {rule_id}"
    full_line = _finding_line(rule_id, RULES[rule_id].severity)
    expected = [line for case in cases for line in _spec(case).get("stderr") or [] if f"[{rule_id}]" in line]
    assert expected, f"no {rule_id.lower()}-fail* case expects a [{rule_id}] finding on stderr"
    assert any(full_line.match(line) for line in expected), (
        f"no {rule_id.lower()}-fail* case expects a full `file:line:col: {RULES[rule_id].severity}[{rule_id}]: ...` "
        f"line: {expected}")


@pytest.mark.parametrize("rule_id", list(RULES))
def test_rule_has_a_passing_case(rule_id: str) -> None:
    cases = _cases(rule_id, "pass")
    assert cases, f"no tests/cases/{rule_id.lower()}-pass*/ case for {rule_id}"
    for case in cases:
        spec = _spec(case)
        assert spec["args"][:3] == ["check", "-o", "json"] and spec.get("exit", 0) == 0, case.name
        golden = case / "expected.out"
        assert golden.is_file(), f"{case.name} has no expected.out"
        codes = [f["code"] for f in json.loads(golden.read_text())["findings"]]
        assert rule_id not in codes, f"{case.name} still reports {rule_id}"


def test_plt09_is_pinned_offline() -> None:
    """PLT-09 needs the live state (diff's code): offline `check` never reports it."""
    assert "PLT-09" not in RULES
    assert (CASES / "plt-09-offline" / "case.yaml").is_file()
