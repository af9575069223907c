"""``cozy-render ls``: one row per cluster, a table on a terminal, JSON otherwise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import OVERLAYS


def test_json_rows(cli) -> None:
    code, out, _ = cli("ls", str(OVERLAYS), "-o", "json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["clusters"]}
    assert sorted(rows) == sorted(p.name for p in (OVERLAYS / "clusters").iterdir())
    from renderer.platform_chart import DEFAULT_VERSION

    assert rows["vgpu-apt-01"]["version"] == DEFAULT_VERSION  # issue 23: the version it is judged by, never "?"
    assert rows["vgpu-apt-01"] | {"version": "-"} == {
        "name": "vgpu-apt-01", "os": "apt", "platform": "isp-full-generic", "version": "-", "gpu": "bundle:vgpu",
        "hubble": "off", "vlans": 0, "errors": 0, "warnings": 0}
    assert rows["gpu-talos-01"]["gpu"] == "talos-native" and rows["gpu-talos-01"]["hubble"] == "own"
    assert rows["vlan-apt-01"]["vlans"] == 2
    assert rows["gpu-apt-01"]["warnings"] >= 1


def test_table_sorted_by_a_column(cli) -> None:
    code, out, _ = cli("ls", str(OVERLAYS), "-o", "table", "--sort", "vlans")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "OS", "PLATFORM", "VERSION", "GPU", "HUBBLE", "VLANS", "ERRORS", "WARNINGS"]
    assert [line.split()[0] for line in lines[1:3]] == ["vlan-apt-01", "vlan-talos-01"]


def test_errors_shows_only_failing_clusters(cli, tmp_path: Path) -> None:
    tree = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, tree)
    (tree / ".git").mkdir()
    code, out, _ = cli("ls", str(tree), "--errors", "-o", "json")
    assert (code, json.loads(out)["clusters"]) == (0, [])
    broken = tree / "clusters" / "vgpu-apt-01" / "cluster.yaml"
    broken.write_text(broken.read_text().replace("variant: vgpu", "variant: vgpuu"), encoding="utf-8")
    code, out, _ = cli("ls", str(tree), "--errors", "-o", "json")
    rows = json.loads(out)["clusters"]
    assert code == 1
    assert [(r["name"], r["errors"], r["gpu"]) for r in rows] == [("vgpu-apt-01", 1, "?")]
