"""The ``-o markdown`` pull-request comment: GitHub-flavoured Markdown (checked with a Markdown
parser, markdown-it-py with GFM's tables and strikethrough), one collapsible section per changed
cluster, never over the cap, saying what was cut and how to see all."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.preview.conftest import SECRET_VALUES, without_helm

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py comes with the test extra")


def parse(text: str) -> list:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)


def review_of(repo: Path, **kw):
    from renderer.preview import PreviewRequest, collect

    return collect(PreviewRequest(repo / "overlays", "base", "change", all_clusters=True, **kw))


def markdown(review, limit: int = 65_536) -> str:
    from renderer.preview.report import as_markdown

    return as_markdown(review, "cozy-render diff --base base --head change --all overlays", limit)


def structure(text: str) -> dict:
    tokens = parse(text)
    html = [t.content for t in tokens if t.type == "html_block"]
    rows = []
    in_first_table = None
    for i, t in enumerate(tokens):
        if t.type == "table_open" and in_first_table is None:
            in_first_table = True
        if in_first_table and t.type == "tr_open" and tokens[i + 1].type == "td_open":
            rows.append(tokens[i + 2].children[0].content if tokens[i + 2].children else "")
        if t.type == "table_close" and in_first_table:
            in_first_table = False
    return {"opens": [h for h in html if h.startswith("<details>")],
            "closes": [h for h in html if h.strip() == "</details>"],
            "rows": rows, "fences": [t.info for t in tokens if t.type == "fence"],
            "headings": [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]}


def test_the_comment_is_a_table_and_one_section_per_changed_cluster(fleet_repo: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    text = markdown(review_of(fleet_repo))
    assert len(text) <= 65_536 and text.startswith("<!-- cozy-render-diff -->\n")
    found = structure(text)
    changed = ["apt-a", "apt-bundles", "apt-gpu", "apt-secret", "new", "old", "talos-gpu"]
    assert found["rows"] == changed  # the summary table: changed clusters only, unchanged ones counted
    assert len(found["opens"]) == len(found["closes"]) == len(changed)
    # Sections: the one with a new error first (the cap cuts from the end).
    assert [o.split("<b>", 1)[1].split("</b>", 1)[0] for o in found["opens"]] == ["talos-gpu", *changed[:-1]]
    assert set(found["fences"]) == {"diff"}
    assert found["headings"][0].startswith("cozy-render diff: base base")
    assert "1 unchanged cluster(s)" in text and "Cut to fit" not in text
    assert "**GPU\\-05**" not in text and "**GPU-05**: vGPU is not supported on Talos" in text
    for value in SECRET_VALUES:
        assert value not in text


def test_a_small_cap_cuts_diffs_then_sections_and_says_so(fleet_repo: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    review = review_of(fleet_repo)
    full = markdown(review)
    for limit in (12_000, 6_000, 3_000):
        text = markdown(review, limit)
        assert len(text) <= limit < len(full)
        assert "Cut to fit the" in text and "cozy-render diff --base base --head change --all overlays -o text" in text
        found = structure(text)
        assert len(found["opens"]) == len(found["closes"])
        assert found["rows"][:1] == ["apt-a"]
        assert "<b>talos-gpu</b>" in text or limit < 6_000  # a cluster with a new error keeps its section


def test_a_fleet_sized_review_fits_githubs_limit(fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """900 changed clusters whose changes all differ (renamed copies of this review's, each with an
    object of its own): the comment still parses, stays within 65,536 characters and names what it cut."""
    without_helm(monkeypatch)
    review = review_of(fleet_repo)
    changed = [c for c in review.clusters if c.status != "unchanged" and c.objects]
    many = [c._replace(name=f"{c.name}-{i:03d}", objects=[o._replace(key=(*o.key[:3], f"{o.key[3]}-{i}"))
                                                        for o in c.objects])
            for i in range(150) for c in changed][:900]
    text = markdown(review._replace(clusters=many))
    assert len(text) <= 65_536
    assert "Cut to fit GitHub's 65,536-character comment limit" in text
    assert "table row(s)" in text and "the sections of" in text and "-o text" in text
    found = structure(text)
    assert len(found["opens"]) == len(found["closes"]) > 0
    assert 0 < len(found["rows"]) < 900 and f"and {900 - len(found['rows'])} more change(s)" in text


def test_the_same_change_in_many_clusters_is_one_group(fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """400 clusters with one identical change (issue 33 item 5): one row, one section naming them all
    (folded), never 400 repeated hunks."""
    without_helm(monkeypatch)
    review = review_of(fleet_repo)
    (apt_a,) = [c for c in review.clusters if c.name == "apt-a"]
    many = [apt_a._replace(name=f"edge-{i:03d}") for i in range(400)]
    text = markdown(review._replace(clusters=many))
    assert len(text) <= 65_536 and "Cut to fit" not in text
    found = structure(text)
    assert len(found["rows"]) == 1 and found["rows"][0].endswith("(400 clusters)")
    assert "<b>The same change in 400 clusters</b>" in text and text.count("```diff") == 1
    assert "edge-000, edge-001" in text and "edge-399" in text  # every name, in a folded list
    assert len(found["opens"]) == len(found["closes"]) == 2  # the group's section and its folded list


def test_text_from_overlays_cannot_break_the_markdown() -> None:
    from renderer.preview.report import _code, _fence, md

    assert md("a|b *c* <script> `d` [x](y) ~~s~~ & e_f") == \
        "a\\|b \\*c\\* &lt;script&gt; \\`d\\` \\[x\\](y) \\~\\~s\\~\\~ &amp; e\\_f"
    assert _code("a`b|c") == "``a`b|c``" and _code("a|b", in_table=True) == "`a\\|b`"
    fence = _fence(["```", "x"], "diff")
    assert fence.startswith("````diff\n") and fence.endswith("\n````\n")
    tokens = parse(fence)
    assert [t.type for t in tokens] == ["fence"] and tokens[0].content == "```\nx\n"


def test_markdown_through_the_cli(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    code, out, err = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "base", "--head", "change",
                         "-o", "markdown", "--exit-zero")
    assert (code, err) == (0, "")
    out_io = io.StringIO(out)
    assert out_io.readline() == "<!-- cozy-render-diff -->\n"
    assert len(structure(out)["opens"]) == 7
