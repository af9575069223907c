"""Reports that cannot be forged (issue 34 items 9 and 10): every value from the repository (a cluster
folder, a changed file, a finding's location and message, a revision's name) reaches the Markdown
comment, the JSON and the text escaped for that format. The Markdown is parsed with markdown-it-py:
no HTML block, heading, link, @mention or #reference the report did not make; fences closed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.preview.conftest import cluster, commit_all, git, without_helm

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py comes with the test extra")

# A folder name (no "/" can be in one) and a key (anything YAML holds) an attacker chose.
HOSTILE = "h\n<details>\n# heading @team #123 \u202e\x1b[2J\n::error file=x::forged"
HOSTILE_KEY = "k\n</details>\n# heading2 @org/team #456 <img src=x onerror=alert(1)> http://evil.example"
BRANCH = "x<details>@team#123"


@pytest.fixture
def hostile_repo(fleet_repo: Path) -> Path:
    folder = fleet_repo / "overlays" / "clusters" / HOSTILE
    folder.mkdir()
    (folder / "cluster.yaml").write_text(cluster("hostile").replace("metadata: {name: hostile}\n", "")
                                         + json.dumps(HOSTILE_KEY) + ": 1\n")
    bad = os.fsencode(str(fleet_repo / "overlays" / "clusters")) + b"/bad-\xff"
    os.mkdir(bad)
    with open(bad + b"/cluster.yaml", "w", encoding="utf-8") as f:
        f.write(cluster("bad-name").replace("metadata: {name: bad-name}\n", ""))
    commit_all(fleet_repo, "hostile names")
    git(fleet_repo, "branch", BRANCH)
    return fleet_repo


def _run(cli, repo: Path, output: str) -> str:
    code, out, err = cli("diff", "--all", str(repo / "overlays"), "--base", "change", "--head", BRANCH, "-o", output)
    assert code == 1 and err == "", err
    return out


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c in "\u202e\u2066\u2028"]


def test_markdown_holds_only_the_reports_own_html_headings_and_links(cli, hostile_repo: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_it import MarkdownIt

    without_helm(monkeypatch)
    text = _run(cli, hostile_repo, "markdown")
    assert not _raw_controls(text)
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    own_html = ("<!-- cozy-render-diff -->", "<details><summary>", "</details>")
    for t in tokens:
        if t.type == "html_block":
            assert t.content.startswith(own_html), t.content
    inline = [c for t in tokens if t.type == "inline" for c in (t.children or [])]
    assert {c.content for c in inline if c.type == "html_inline"} <= {"<b>", "</b>", "</summary>"}
    assert not [c for c in inline if c.type in ("link_open", "image")]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert len(headings) == 1 and headings[0].startswith("cozy-render diff: base change")
    prose = " ".join(c.content for c in inline if c.type == "text")
    for forged in ("@team", "@org", "#123", "#456", "http://evil"):
        assert forged not in prose, forged  # split by a zero-width joiner: GitHub links nothing
    opens = sum(t.content.count("<details>") for t in tokens if t.type == "html_block")
    closes = sum(t.content.count("</details>") for t in tokens if t.type == "html_block")
    assert opens == closes > 0
    assert "heading @\u200dteam" in prose and "heading2 @\u200dorg/team" in prose  # shown, inert
    assert "**Changed inputs**" in text
    assert all(t.type != "fence" or t.markup.startswith("```") for t in tokens)


def test_text_and_json_hold_no_raw_control_character(cli, hostile_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    text = _run(cli, hostile_repo, "text")
    assert not _raw_controls(text)
    assert not [line for line in text.splitlines() if line.startswith("::")]  # no workflow command forged
    assert "cluster h\\n<details>\\n# heading @team #123 \\u202e\\x1b[2J\\n::error" in text
    raw = _run(cli, hostile_repo, "json")
    assert not _raw_controls(raw.replace("\n", ""))
    data = json.loads(raw)
    names = {c["cluster"] for c in data["clusters"]}
    assert HOSTILE in names and "bad-\udcff" in names  # JSON keeps the exact name, escaped
    assert data["head"]["revision"] == BRANCH


def test_a_non_utf8_cluster_folder_never_exits_4(cli, hostile_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    for output in ("text", "json", "markdown"):
        assert "bad-\\udcff" in _run(cli, hostile_repo, output)
