"""``cozy-render rules``: one severity per code, or both with when each applies; sources users can open;
one aligned table (issue 23, item 3)."""

from __future__ import annotations

import inspect
import json
import re

from renderer.check.rules import all_rules
from renderer.errors import ERROR, WARNING
from renderer.registry import SEVERITIES, entries, public_source


def test_a_rule_that_overrides_its_severity_lists_both() -> None:
    """A check that yields a Hit at the other severity must say so in SEVERITIES (and rules shows it)."""
    for rule in all_rules().values():
        other = WARNING if rule.severity == ERROR else ERROR
        overrides = f"severity={other.upper()}" in inspect.getsource(rule.check)
        assert overrides == (rule.id in SEVERITIES), rule.id
    for code, pairs in SEVERITIES.items():
        assert sorted(s for s, _ in pairs) == [ERROR, WARNING], code


def test_rules_shows_both_severities_and_when(cli) -> None:
    code, out, _ = cli("rules", "PLT-11", "-o", "json")
    (rule,) = json.loads(out)["rules"]
    assert [s["severity"] for s in rule["severities"]] == ["error", "warning"]
    code, out, _ = cli("rules", "GPU-14")
    assert code == 0 and out.startswith("GPU-14 (error|warning)") and "\nwarning when vgpu" in out
    code, out, _ = cli("rules")
    assert re.search(r"^  PLT-11 +error\|warning ", out, re.M)


def test_sources_are_links_or_named_files_not_internal_shorthand() -> None:
    for entry in entries().values():
        for source in entry.sources:
            assert not re.search(r"(?<![A-Za-z])[CW]:[a-z]", source), (entry.id, source)
            assert not re.search(r"\bissue \d+", source), (entry.id, source)
            assert not source.startswith(("reference (", "design.md")), (entry.id, source)
    assert public_source("W:virtualization/vgpu.md") == \
        "https://github.com/cozystack/website/blob/main/content/en/docs/next/virtualization/vgpu.md"
    assert public_source("C:packages/core/platform/sources/*.yaml").endswith(
        "/tree/3c780acd417f086f8f18d040d0d7020ff55d3ba3/packages/core/platform/sources (*.yaml)")


def test_the_table_is_aligned(cli) -> None:
    """CMP-KUBE-VERSION is longer than the other IDs; every summary still starts in the same column."""
    _, out, _ = cli("rules")
    rows = [line for line in out.splitlines() if line.startswith("  ")]
    starts = {re.match(r"^  \S+ +\S+ +", line).end() for line in rows}
    assert len(starts) == 1, sorted(starts)
