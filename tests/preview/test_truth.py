"""Issue 33: the preview says what happens, not what would happen if every render synced.

A refused side (``render`` exits 3: GPU-05 for vgpu on Talos, reference rule GPU-05) generates
nothing in Argo CD, so nothing syncs: no objects, no platform reaction, the refusing findings named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.preview.conftest import without_helm


def preview(cli, repo: Path, *args: str, output: str = "json") -> tuple[int, str]:
    code, out, err = cli("diff", "--all", str(repo / "overlays"), "--base", "base", "--head", "change",
                         "-o", output, *args)
    assert err == "", err
    return code, out


def clusters(out: str) -> dict[str, dict]:
    return {c["cluster"]: c for c in json.loads(out)["clusters"]}


def test_a_refused_head_is_a_refusal_in_every_format(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    talos = clusters(preview(cli, fleet_repo)[1])["talos-gpu"]
    assert talos["head"]["status"] == "refused" and talos["base"]["status"] == "rendered"
    assert talos["objects"] == [] and talos["platform"] is None
    assert "GPU-05" in [f["code"] for f in talos["head"]["refused_by"]]
    _, text = preview(cli, fleet_repo, output="text")
    section = text.split("# cluster talos-gpu: changed", 1)[1].split("\n# cluster ", 1)[0]
    assert "the render at the head is refused" in section and "error[GPU-05]" in section
    assert "Package" not in section.split("refused by:", 1)[0]  # no object lines, no platform lines
    _, markdown = preview(cli, fleet_repo, output="markdown")
    part = markdown.split("<b>talos-gpu</b>", 1)[1].split("</details>", 1)[0]
    assert "refused at the head" in part and "The render at the head is refused" in part and "**GPU-05**" in part
    assert "Platform Packages" not in part


def test_a_refused_base_is_a_refusal_too(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The change may be the fix: reviewing back from the change, the base is refused."""
    without_helm(monkeypatch)
    _, out, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--head", "base",
                       "-o", "json")
    talos = clusters(out)["talos-gpu"]
    assert talos["base"]["status"] == "refused" and talos["head"]["status"] == "rendered"
    assert talos["objects"] == [] and talos["platform"] is None and talos["status"] == "changed"
