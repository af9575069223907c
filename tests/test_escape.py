"""Messages that cannot be forged (issue 25 item 10): renderer.escape, used by every output format."""

from __future__ import annotations

import json
from pathlib import Path

from renderer import report
from renderer.errors import Finding, Location
from renderer.escape import MAX_VALUE_CHARS, github_data, github_property, printable, quote

EVIL = "c1\n::error file=.github/workflows/x.yml,line=1::forged\x1b[2J\u202e"


def test_printable_keeps_one_line_and_no_control_character() -> None:
    text = printable(EVIL)
    assert "\n" not in text and "\x1b" not in text and "\u202e" not in text
    assert text == "c1\\n::error file=.github/workflows/x.yml,line=1::forged\\x1b[2J\\u202e"


def test_quote_leaves_plain_names_alone_and_quotes_the_rest() -> None:
    assert quote("clusters/c1/cluster.yaml") == "clusters/c1/cluster.yaml"
    assert quote("a b'c") == "'a b\\'c'"
    long = quote("x" * 100_000)
    assert len(long) < MAX_VALUE_CHARS + 60 and long.endswith(f"... ({100_000 - MAX_VALUE_CHARS} more characters)'")


def test_a_finding_is_one_line_in_text_and_github_and_exact_in_json() -> None:
    finding = Finding("OVL-YAML", f"bad {EVIL}", Location(f"clusters/{EVIL}/cluster.yaml", 3, 4))
    text = report.text([finding])
    assert text.count("\n") == 1 and "\x1b" not in text
    # the path is quoted: it cannot pose as a location of its own, and where it ends is plain
    assert text.startswith("'clusters/c1\\n::error") and "/cluster.yaml':3:4: error[OVL-YAML]: bad c1\\n" in text
    github = report.github_annotation(finding)
    # One line: a workflow command is recognised only at a line's start, so "::" inside the data is inert.
    assert github.count("\n") == 1 and github.startswith("::error file=clusters/c1"), github
    assert "file=clusters/c1\\n%3A%3Aerror file=.github/workflows/x.yml%2Cline=1%3A%3Aforged" in github
    (entry,) = json.loads(json.dumps({"findings": [finding.as_dict()]}))["findings"]
    assert entry["file"] == f"clusters/{EVIL}/cluster.yaml"  # JSON escapes for itself, losslessly


def test_github_escaping_follows_the_actions_toolkit() -> None:
    assert github_data("50% done") == "50%25 done"
    assert github_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_the_cli_never_prints_a_raw_control_character_from_a_folder_name(cli, tmp_path: Path) -> None:
    folder = tmp_path / "repo" / "clusters" / "c1\n::error::forged"
    folder.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (folder / "cluster.yaml").write_text("a: [\n")
    for fmt in ("text", "github"):
        _code, out, err = cli("check", str(folder), "-o", fmt)
        printed = out + err
        assert "\n::error::forged" not in printed, printed
        assert all(line.startswith(("::error", "::warning")) for line in out.splitlines()), out


def test_completion_never_offers_a_name_with_a_control_character(tmp_path: Path, monkeypatch) -> None:
    from renderer.commands.completion import cluster_folders

    for name in ("good", "bad\nname"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cluster.yaml").write_text("")
    monkeypatch.chdir(tmp_path)
    assert [item.value for item in cluster_folders("")] == ["good"]


def test_markdown_text_makes_no_html_heading_link_mention_or_reference() -> None:
    """The preview's comment (issue 34 item 9): a value is inline text and nothing else."""
    from renderer.escape import markdown_text

    text = markdown_text("a\n# h <details> *x* [l](u) @team #123 http://e.example www.e.example\u202e\x1b[2J|~!")
    assert "\n" not in text and "\x1b" not in text and "\u202e" not in text
    assert "&lt;details&gt;" in text and "\\*x\\*" in text and "\\[l\\](u)" in text and "\\|\\~\\!" in text
    zwj = "\u200d"
    assert f"@{zwj}team" in text and f"#{zwj}123" in text and f"#{zwj} h" in text
    assert f"http:{zwj}//e" in text and f"w{zwj}ww.e" in text


def test_markdown_code_and_fence_always_close() -> None:
    from renderer.escape import markdown_code, markdown_fence

    assert markdown_code("a`b") == "``a`b``" and markdown_code("`x`") == "`` `x` ``"
    assert markdown_code("a|b", in_table=True) == "`a\\|b`" and markdown_code("a\nb") == "`a\\nb`"
    fence = markdown_fence(["````", "\x1b[2J x"], "diff")
    assert fence.startswith("`````diff\n") and fence.endswith("\n`````\n") and "\x1b" not in fence
