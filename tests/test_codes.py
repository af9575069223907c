"""Every code the tool can print is registered and explained (renderer/codes.py + renderer/check/rules)."""

from __future__ import annotations

import re

import pytest

from renderer.registry import entries
from tests.conftest import REPO

# A code literal where findings are made: Finding("X", ...), fail("X", ...), error("X", ...), or a
# module constant CODE = "X" (renderer/check/schemas).
_EMITTED = re.compile(r'(?:\b(?:Finding|fail|error)\(\s*|\bCODE\s*=\s*)"([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*)"')


def emitted_codes() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted((REPO / "renderer").rglob("*.py")):
        if "_generated" in path.parts:
            continue
        for match in _EMITTED.finditer(path.read_text(encoding="utf-8")):
            found.setdefault(match.group(1), str(path.relative_to(REPO)))
    return found


def test_the_scan_finds_codes_of_every_kind() -> None:
    codes = emitted_codes()
    assert {"OVL-YAML", "VLAN-CONFLICT", "CMP-PARAMS", "SCHEMA", "OUT-WRITE", "PLT-11"} <= set(codes)


def test_every_emitted_code_is_registered() -> None:
    registry = entries()
    missing = {code: where for code, where in emitted_codes().items() if code not in registry}
    assert missing == {}, "register these in renderer/codes.py (or as rules): " + repr(missing)


def test_every_entry_is_complete() -> None:
    for code, entry in entries().items():
        assert re.fullmatch(r"[A-Z]+(-[A-Z0-9]+)*", code), code
        assert entry.severity in ("error", "warning"), code
        assert entry.summary and "\n" not in entry.summary, code
        assert entry.explanation.strip() and entry.sources and all(entry.sources), code


@pytest.mark.parametrize("code", ["OVL-GPU", "VLAN-CONFLICT", "CMP-PARAMS", "SCHEMA", "OVL-YAML", "GPU-05"])
def test_rules_explains_any_code(cli, code: str) -> None:
    exit_code, out, err = cli("rules", code.lower())
    assert (exit_code, err) == (0, "")
    assert out.startswith(f"{code} (") and "\n\nSources:\n  - " in out


def test_rules_lists_every_entry_grouped_by_family(cli) -> None:
    exit_code, out, _ = cli("rules")
    assert exit_code == 0
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert listed == list(entries())
    headings = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert len(headings) == len({e.family for e in entries().values()})
