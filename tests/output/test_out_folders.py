"""--out owns only what it writes (issue 11, Flux 2), never destroys inputs (issue 12, class 3), and
--check says what is stale (issue 11, Flux 3)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from renderer import output
from renderer.load.yamlio import display_path


@pytest.fixture
def fleet(samples: Path) -> Path:
    return samples


def test_all_keeps_a_users_files_and_removes_only_marked_vanished_clusters(cli, fleet: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    out.mkdir()
    (out / "README.md").write_text("kept by the user\n")
    (out / "nodes" / "c1").mkdir(parents=True)
    (out / "nodes" / "c1" / "netplan.yaml").write_text("node-config output\n")
    code, _, err = cli("render", "--all", str(fleet), "--out", str(out))
    assert code == 0, err
    assert (out / "gpu-apt-01" / output.MARK).is_file()
    shutil.rmtree(fleet / "clusters" / "vlan-apt-01")
    code, _, err = cli("render", "--all", str(fleet), "--out", str(out))
    assert code == 0, err
    assert not (out / "vlan-apt-01").exists()
    assert (out / "README.md").read_text() == "kept by the user\n"
    assert (out / "nodes" / "c1" / "netplan.yaml").read_text() == "node-config output\n"
    code, _, err = cli("render", "--all", str(fleet), "--out", str(out), "--check")
    assert code == 0, err


def test_an_unmarked_folder_of_a_vanished_cluster_is_kept(cli, fleet: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    (out / "old-cluster").mkdir(parents=True)
    (out / "old-cluster" / "notes.yaml").write_text("mine\n")
    assert cli("render", "--all", str(fleet), "--out", str(out))[0] == 0
    assert (out / "old-cluster" / "notes.yaml").read_text() == "mine\n"


def test_a_folder_from_before_the_mark_counts_as_ours(fleet: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    files = output.directory_files([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}])
    out.mkdir()
    for name, text in files.items():  # unmarked, as cozy-render wrote it before the mark existed
        (out / name).write_text(text)
    assert output.is_ours(out)
    (out / "notes.txt").write_text("a file the kustomization does not list\n")
    assert not output.is_ours(out)


@pytest.mark.parametrize("where", ["cluster", "root", "parent", "base", "git", "cluster-inside"])
def test_out_never_replaces_inputs(cli, fleet: Path, where: str) -> None:
    cluster = fleet / "clusters" / "gpu-apt-01"
    out = {"cluster": cluster, "root": fleet, "parent": fleet.parent, "base": fleet / "base" / "rendered",
           "git": fleet / ".git" / "x", "cluster-inside": cluster / "rendered"}[where]
    before = sorted(str(p) for p in fleet.rglob("*"))
    code, stdout, err = cli("render", str(cluster), "--out", str(out))
    assert (code, stdout) == (3, "") and "error[OUT-UNSAFE]" in err, err
    assert sorted(str(p) for p in fleet.rglob("*")) == before


def test_check_names_each_stale_file_with_a_diff(cli, fleet: Path, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "rendered"
    cluster = str(fleet / "clusters" / "gpu-apt-01")
    assert cli("render", cluster, "--out", str(out))[0] == 0
    target = out / "package_cozystack.metallb.yaml"
    target.write_text(target.read_text().replace("cozystack.metallb", "cozystack.other", 1))
    (out / "namespace_tenant-example.yaml").unlink(missing_ok=True)
    (out / "extra.yaml").write_bytes(b"caf\xe9\n")  # not UTF-8: reported, never a crash
    monkeypatch.setenv("NO_COLOR", "1")
    code, stdout, err = cli("render", cluster, "--out", str(out), "--check")
    assert code == 1 and stdout == ""
    assert f"{display_path(target)}: out of date (re-run cozy-render render --out)" in err
    assert "-  name: cozystack.other\n+  name: cozystack.metallb\n" in err
    assert f"{display_path(out / 'extra.yaml')}: not rendered any more" in err
    assert "\033[" not in err

    code, stdout, _ = cli("render", cluster, "--out", str(out), "--check", "-o", "json")
    assert code == 1
    report = json.loads(stdout)["stale"]
    assert {e["status"] for e in report} >= {"out of date", "not rendered any more"}
    assert all(set(e) == {"file", "status", "diff"} for e in report)


def test_check_colours_only_a_terminal_and_honours_no_color(monkeypatch, tmp_path: Path) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    files = {"a.yaml": "x: 1\n"}
    monkeypatch.delenv("NO_COLOR", raising=False)
    for stream, coloured in ((io.StringIO(), False), (Tty(), True)):
        assert output.check_report(tmp_path / "none", files, stderr=stream) == 1
        assert ("\033[32m+x: 1\033[0m" in stream.getvalue()) is coloured
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Tty()
    output.check_report(tmp_path / "none", files, stderr=tty)
    assert "\033[" not in tty.getvalue()


def test_stale_staging_of_a_dead_process_is_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    files = {"a.yaml": "1\n", output.KUSTOMIZATION: "# Generated by cozy-render\nresources:\n- a.yaml\n"}
    output.write_clusters(out, {f"c1/{k}": v for k, v in files.items()}, all_clusters=True)
    dead = out / ".c1.cozy-staging-999999999-abc"
    dead.mkdir()
    (dead / output.MARK).write_text(output.MARK_TEXT)
    foreign = out / ".c1.cozy-staging-999999999-mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("no mark: not ours\n")
    # A run killed after creating its staging folder and before writing the mark (issue 25 item 12).
    unmarked_empty = out / ".c1.cozy-staging-999999999-early"
    unmarked_empty.mkdir()
    output.write_clusters(out, {f"c1/{k}": v for k, v in files.items()}, all_clusters=True)
    assert not dead.exists() and foreign.exists() and not unmarked_empty.exists()


def test_out_beside_a_layer_at_the_repository_root_is_allowed(cli, fleet: Path) -> None:
    """A shared layer may sit at the root; rendered/ beside it replaces nothing the render reads."""
    cluster = fleet / "clusters" / "gpu-apt-01" / "cluster.yaml"
    (fleet / "common.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n")
    cluster.write_text(cluster.read_text().replace("inherits: [", "inherits: [../../common.yaml, ", 1))
    assert "../../common.yaml" in cluster.read_text()
    code, _, err = cli("render", str(cluster.parent), "--out", str(fleet / "rendered"))
    assert code == 0, err
    code, _, err = cli("render", str(cluster.parent), "--out", str(fleet / "common.yaml"))
    assert code != 0
