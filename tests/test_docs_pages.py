"""The user pages in docs/ (getting started, how-tos, the generated overlay reference): links resolve
and the how-tos link the Cozystack pages they mirror. The commands they show are run, as written,
by tests/test_docs_examples.py."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO

PAGES = [REPO / "README.md", REPO / "docs" / "getting-started.md", REPO / "docs" / "overlay-reference.md",
         *sorted((REPO / "docs" / "how-to").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#]+)(#[^)]*)?\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page) -> None:
    for target, _ in LINK.findall(page.read_text(encoding="utf-8")):
        if not target.startswith("http"):
            assert (page.parent / target).exists(), f"{page.name}: {target}"


@pytest.mark.parametrize("name", ["gpu", "hubble", "vlans"])
def test_how_tos_link_the_cozystack_pages_they_mirror(name: str) -> None:
    text = (REPO / "docs" / "how-to" / f"{name}.md").read_text(encoding="utf-8")
    assert re.search(r"\(https://cozystack\.io/docs/next/[a-z/-]+/\)", text)


def test_readme_links_every_user_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert f"({page.relative_to(REPO).as_posix()})" in readme, page.name
