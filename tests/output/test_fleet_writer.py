"""Issue 24 item 2: the ``--out`` writer of a fleet does its refusals once per run, resolves each distinct
path once and removes the old trees in a second thread; the answers are those of the per-path calls."""

from __future__ import annotations

import os
from pathlib import Path

from renderer import output
from renderer.output import guard, write


def test_the_guard_resolves_paths_as_realpath_does(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "file.yaml").write_text("a: 1\n")
    (real / "target.yaml").write_text("b: 2\n")
    os.symlink(real, tmp_path / "folder-link")
    os.symlink(real / "target.yaml", real / "sub" / "file-link.yaml")
    os.symlink("../missing", real / "dangling")
    os.symlink(tmp_path / "loop-b", tmp_path / "loop-a")
    os.symlink(tmp_path / "loop-a", tmp_path / "loop-b")
    paths = [real / "sub" / "file.yaml", tmp_path / "folder-link" / "sub" / "file.yaml",
             tmp_path / "folder-link" / "sub" / "file-link.yaml", real / "dangling", real / "nothing" / "here.yaml",
             tmp_path / "folder-link" / "sub" / ".." / "target.yaml", tmp_path / "loop-a", real / "target.yaml" / "x",
             Path("relative/path.yaml"), Path("/")]
    resolver = guard._Resolver()
    for path in paths * 2:  # the second round is served from the folders already resolved
        assert resolver.real(os.fspath(path)) == os.path.realpath(path), path


def test_within_is_inside_on_strings() -> None:
    for path, folder in [("/a/b", "/a"), ("/a", "/a"), ("/ab", "/a"), ("/a/b", "/"), ("/", "/"), ("/a", "/a/b")]:
        assert guard._within(path, folder) == guard._inside(Path(path), Path(folder)), (path, folder)


def test_old_trees_are_all_removed_when_the_writer_ends(tmp_path: Path) -> None:
    folders = []
    for i in range(20):
        folder = tmp_path / f"old-{i}"
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "file").write_text("x")
        folders.append(str(folder))
    for threaded in (True, False):
        with write._Remover(threaded) as doomed:
            for folder in folders[:10] if threaded else folders[10:]:
                doomed.append(folder)
            doomed.append(str(tmp_path / "never-there"))
    assert list(tmp_path.iterdir()) == []


def test_a_fleet_rewrite_leaves_only_the_cluster_folders(tmp_path: Path) -> None:
    out = tmp_path / "out"
    files = {f"c{i}/{name}": f"{i}-{name}\n" for i in range(5) for name in ("a.yaml", "b.yaml", "kustomization.yaml")}
    output.write_clusters(out, files, all_clusters=True)
    output.write_clusters(out, {k: v.upper() for k, v in files.items() if not k.startswith("c4/")}, all_clusters=True)
    assert sorted(p.name for p in out.iterdir()) == ["c0", "c1", "c2", "c3"]  # c4 vanished, no staging left
    assert (out / "c2" / "b.yaml").read_text() == "2-B.YAML\n"
    assert sorted(p.name for p in (out / "c2").iterdir()) == [output.MARK, "a.yaml", "b.yaml", "kustomization.yaml"]


def test_a_removal_cut_short_leaves_the_mark_so_the_next_run_deletes_the_rest(tmp_path: Path, monkeypatch) -> None:
    """A kill while the remover deletes an old tree (issue 25 item 12): whatever is left still carries
    the mark, so the next run's stale-staging sweep deletes it instead of leaving it for ever."""
    import pytest

    staging = tmp_path / ".c1.cozy-staging-123-abcdefgh"
    (staging / "sub").mkdir(parents=True)
    (staging / "sub" / "x.yaml").write_text("x")
    (staging / "a.yaml").write_text("a")
    (staging / "z.yaml").write_text("z")
    (staging / output.MARK).write_text(output.MARK_TEXT)
    real_unlink, calls = os.unlink, []

    def killed_after_one(path: str) -> None:
        calls.append(path)
        if len(calls) > 1:
            raise KeyboardInterrupt  # stands in for the kill: nothing after it runs
        real_unlink(path)

    monkeypatch.setattr(os, "unlink", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        write._remove(str(staging))
    monkeypatch.undo()
    assert (staging / output.MARK).is_file(), "the mark went first: the rest would be litter for ever"
    write._clean_stale(tmp_path)
    assert not staging.exists()
