"""docs/rules.md is generated from the registry (python -m renderer.generate; staleness: tests/test_generate.py)."""

from __future__ import annotations

from renderer.check.rules.docs import markdown
from renderer.registry import entries, explanation_text
from tests.conftest import REPO

DOC = REPO / "docs" / "rules.md"


def test_rules_doc_prints_the_generated_page(cli) -> None:
    code, out, err = cli("rules-doc")
    assert (code, err) == (0, "")
    assert out == markdown() == DOC.read_text(encoding="utf-8")


def test_rules_doc_covers_every_entry_in_reference_order() -> None:
    registry = entries()
    page = markdown()
    headings = [line[4:] for line in page.splitlines() if line.startswith("### ")]
    assert sorted(headings) == sorted(registry)
    groups = [line[3:] for line in page.splitlines() if line.startswith("## ")]
    assert groups[:2] == ["Package / PackageSource API", "Platform Package"]
    assert "Overlay input (refused before anything renders)" in groups
    for rule_id in registry:
        assert f"| [{rule_id}](#{rule_id.lower()}) |" in page


def test_rules_doc_is_markdown_safe() -> None:
    page = markdown()
    # "spec.components.<component>.values" in a summary must not become an HTML tag.
    assert "spec.components.&lt;component&gt;.values" in page
    assert "bundles (\\*.yaml)" in page  # a globbed upstream source: its folder linked, the glob escaped
    # Explanations lose the code's indentation (4 spaces would make a Markdown code block).
    pkg01 = explanation_text(entries()["PKG-01"])
    assert not any(line.startswith(" ") for line in pkg01.splitlines())
