"""Every ``--all`` walk lists the fleet through ``renderer.walk`` (issue 34 item 1).

A pull request can commit a symlink where a cluster folder (or the ``--against`` folder's entry for
a cluster) should be. Followed, it would make cozy-render read, and print as the cluster's objects,
whatever it points at. The walk refuses a link out of the named folder, a loop and a FIFO, naming
the entry and never reading what it names; a link that stays inside is followed as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from renderer import walk
from tests.conftest import BASE_OVERLAY

SECRET = "s3cr3t-outside-the-repository"
LIVE = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\n  namespace: x\n"
        f"  labels: {{render.cozystack.io/cluster: c1}}\ndata: {{token: {SECRET}}}\n")


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with cluster c1, a cluster c2 and a live folder outside it; cwd is the repository."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "clusters" / "c1").mkdir(parents=True)
    (root / "clusters" / "c1" / "cluster.yaml").write_text(json.dumps(BASE_OVERLAY))
    outside = tmp_path / "outside"
    (outside / "c2").mkdir(parents=True)
    (outside / "c2" / "cluster.yaml").write_text(json.dumps({**BASE_OVERLAY, "metadata": {"name": "c2"},
                                                             "vars": {"token": SECRET}}))
    (outside / "live").mkdir()
    (outside / "live" / "objects.yaml").write_text(LIVE)
    (root / "rendered").mkdir()
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("command", [["render", "--all", "."], ["check", "--all", "."], ["ls", "."],
                                     ["inputs", "--all", "."], ["diff", "--all", "--snapshot", "rendered", "."]])
def test_a_cluster_folder_linked_out_of_the_tree_is_refused(cli, fleet: Path, command: list[str]) -> None:
    os.symlink("../../outside/c2", fleet / "clusters" / "c2")
    code, out, err = cli(*command)
    assert (code, out) == (3, ""), err
    assert err == "clusters/c2: error[OVL-PATH]: --all: this entry is a link to outside the folder; links are " \
                  "followed only inside it\n"


@pytest.mark.parametrize("target", ["c9", "..", "."])  # itself, the tree, the clusters folder
def test_a_cluster_folder_that_loops_is_refused(cli, fleet: Path, target: str) -> None:
    os.symlink(target, fleet / "clusters" / "c9")
    code, out, err = cli("render", "--all", ".")
    assert (code, out) == (3, "") and err.startswith("clusters/c9: error[OVL-PATH]: --all: this entry is a link loop"), err


def test_a_clusters_folder_linked_out_of_the_tree_is_refused(cli, fleet: Path, tmp_path: Path) -> None:
    os.rename(fleet / "clusters", tmp_path / "moved")
    os.symlink("../moved", fleet / "clusters")
    code, out, err = cli("ls", ".")
    assert (code, out) == (3, "") and err.startswith("clusters: error[OVL-PATH]: --all: this entry is a link to outside"), err


def test_a_link_inside_the_tree_is_followed(cli, fleet: Path) -> None:
    (fleet / "staging" / "c2").mkdir(parents=True)
    (fleet / "staging" / "c2" / "cluster.yaml").write_text(json.dumps({**BASE_OVERLAY, "metadata": {"name": "c2"}}))
    os.symlink("../staging/c2", fleet / "clusters" / "c2")
    code, out, err = cli("ls", ".", "-o", "json")
    assert code == 0, err
    assert [row["name"] for row in json.loads(out)["clusters"]] == ["c1", "c2"]


@pytest.mark.parametrize("entry", ["c1", "c1.yaml", "c1.json"])
def test_against_entry_linked_out_of_the_folder_is_never_read(cli, fleet: Path, entry: str) -> None:
    target = "../../outside/live" if entry == "c1" else "../../outside/live/objects.yaml"
    os.symlink(target, fleet / "rendered" / entry)
    code, out, err = cli("diff", "--all", "--against", "rendered", ".")
    assert (code, out) == (3, ""), err
    assert err == f"rendered/{entry}: error[DIFF-SNAPSHOT]: --against: this entry is a link to outside the folder; " \
                  "links are followed only inside it; it is never read\n"
    assert SECRET not in err


def test_against_entry_that_is_a_fifo_or_a_loop_is_refused(cli, fleet: Path) -> None:
    os.mkfifo(fleet / "rendered" / "c1.yaml")
    code, _, err = cli("diff", "--all", "--against", "rendered", ".")
    assert code == 3 and "rendered/c1.yaml: error[DIFF-SNAPSHOT]: --against: this entry is not a regular file" in err
    os.unlink(fleet / "rendered" / "c1.yaml")
    os.symlink("c1", fleet / "rendered" / "c1")
    code, _, err = cli("diff", "--all", "--against", "rendered", ".")
    assert code == 3 and "rendered/c1: error[DIFF-SNAPSHOT]: --against: this entry is a link loop" in err


def test_against_entry_linked_inside_the_folder_is_read(cli, fleet: Path) -> None:
    (fleet / "rendered" / "old").mkdir()
    (fleet / "rendered" / "old" / "objects.yaml").write_text(LIVE.replace(SECRET, "inside"))
    os.symlink("old", fleet / "rendered" / "c1")
    code, out, err = cli("diff", "--all", "--against", "rendered", ".")
    assert code == 1, err
    assert "orphaned              ConfigMap x/outside" in out


def test_entries_lists_one_level_by_the_walkers_rules(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b.yaml").write_text("x")
    os.symlink("a", tmp_path / "c")
    listed = walk.entries(tmp_path)
    assert [(e.name, e.is_dir) for e in listed] == [("a", True), ("b.yaml", False), ("c", True)]
    assert listed[2].real == os.path.realpath(tmp_path / "a")
    assert [e.name for e in walk.entries(tmp_path, keep=lambda n: n != "a")] == ["b.yaml", "c"]
    with pytest.raises(walk.WalkRefused, match="more than 2 entries"):
        walk.entries(tmp_path, limit=2)
    os.symlink("/etc", tmp_path / "d")
    with pytest.raises(walk.WalkRefused, match="link to outside") as refused:
        walk.entries(tmp_path)
    assert refused.value.rel == "d"
    assert [e.name for e in walk.entries(tmp_path / "a", top=tmp_path, keep=lambda n: True)] == []
