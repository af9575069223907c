"""docs/rules.md is generated from the registry; this fails when the committed page is stale."""

from __future__ import annotations

from renderer.rules import all_rules
from renderer.rules.docs import REGENERATE, explanation_text, markdown
from tests.conftest import REPO

DOC = REPO / "docs" / "rules.md"


def test_rules_doc_is_current(cli) -> None:
    code, out, err = cli("rules-doc")
    assert (code, err) == (0, "")
    assert out == markdown(all_rules())
    committed = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert committed == out, f"docs/rules.md is stale: regenerate it with `{REGENERATE}` and commit it"


def test_rules_doc_covers_every_rule_in_reference_order() -> None:
    registry = all_rules()
    page = markdown(registry)
    headings = [line[4:] for line in page.splitlines() if line.startswith("### ")]
    assert sorted(headings) == sorted(registry)
    groups = [line[3:] for line in page.splitlines() if line.startswith("## ")]
    assert groups[:2] == ["Package / PackageSource API", "Platform Package"]
    for rule_id in registry:
        assert f"| [{rule_id}](#{rule_id.lower()}) |" in page


def test_rules_doc_is_markdown_safe() -> None:
    page = markdown(all_rules())
    # "spec.components.<component>.values" in a summary must not become an HTML tag.
    assert "spec.components.&lt;component&gt;.values" in page
    assert "bundles/\\*.yaml" in page
    # Explanations lose the code's indentation (4 spaces would make a Markdown code block).
    pkg01 = explanation_text(all_rules()["PKG-01"])
    assert not any(line.startswith(" ") for line in pkg01.splitlines())
