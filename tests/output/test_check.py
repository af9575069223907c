"""``render --out DIR --check`` (renderer/output/check.py): the report names files as every printed path
is named, relative to the working folder, whether DIR was given absolute or relative."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from renderer import output
from tests.output.test_write_path import HEAD, VLANS


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "clusters" / "c1").mkdir(parents=True)
    (root / "clusters" / "c1" / "cluster.yaml").write_text(HEAD + VLANS)
    monkeypatch.chdir(root)
    monkeypatch.setenv("NO_COLOR", "1")
    return root


def _headers(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("--- ", "+++ "))]


@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
def test_check_headers_are_relative_to_the_working_folder(cli, tree: Path, absolute: bool) -> None:
    out = str(tree / "rendered" / "c1") if absolute else "rendered/c1"
    assert cli("render", "clusters/c1", "--out", out)[0] == 0
    kustomization = tree / "rendered" / "c1" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "# edited\n")
    code, stdout, err = cli("render", "clusters/c1", "--out", out, "--check")
    assert (code, stdout) == (1, "")
    assert _headers(err) == ["--- a/rendered/c1/kustomization.yaml", "+++ b/rendered/c1/kustomization.yaml"], err
    assert "rendered/c1/kustomization.yaml: out of date (re-run cozy-render render --out)\n" in err
    assert "a//" not in err and str(tree) not in err
    # -o json names the file as --out does (schema output render-check); its diff's headers as the text's
    code, stdout, _ = cli("render", "clusters/c1", "--out", out, "--check", "-o", "json")
    (entry,) = json.loads(stdout)["stale"]
    assert code == 1 and entry["file"] == f"{out}/kustomization.yaml"
    assert _headers(entry["diff"]) == _headers(err)


def test_a_folder_sharing_only_the_root_is_named_absolute_without_a_side(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")  # display_path shows a path that shares only "/" with the working folder absolute
    stream = io.StringIO()
    assert output.check_report(tmp_path / "none", {"a.yaml": "x: 1\n"}, stderr=stream) == 1
    named = (tmp_path / "none" / "a.yaml").as_posix()
    assert _headers(stream.getvalue()) == [f"--- {named}", f"+++ {named}"]
