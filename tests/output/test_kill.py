"""--out survives being killed at the rename calls themselves (issue 12, class 4).

The write path has a fault-injection seam (``COZY_RENDER_FAULT``, renderer/output/__init__.py) that sends the
process SIGKILL or SIGINT the n-th time it reaches a swap. After any such interruption every cluster
folder is wholly the old render or wholly the new one (some old, some new under --all), and the next
run finishes the job and leaves no staging folder behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OVERLAYS, REPO


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def clusters(folder: Path) -> dict[str, dict[str, bytes]]:
    return {p.name: tree(p) for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.startswith(".")}


def render_all(root: Path, out: Path, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "ARGOCD_"))}
    env["PYTHONPATH"] = str(REPO)
    if fault:
        env["COZY_RENDER_FAULT"] = fault
    return subprocess.run([sys.executable, "-m", "renderer", "render", "--all", str(root), "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A fleet, its render before an edit (old/) and after (new/); the fleet is left edited."""
    base = tmp_path_factory.mktemp("kill")
    root = base / "repo"
    shutil.copytree(OVERLAYS, root)
    (root / ".git").mkdir()
    assert render_all(root, base / "old").returncode == 0
    layer = root / "base/cluster.yaml"
    layer.write_text(layer.read_text().replace("10.96.0.0/16", "10.97.0.0/16"))
    assert render_all(root, base / "new").returncode == 0
    return root, base / "old", base / "new"


POINTS = [(point, n, sig) for point in ("before-swap", "after-swap") for n in (1, 4, 7) for sig in ("KILL", "INT")]


@pytest.mark.parametrize("point, n, sig", POINTS, ids=[f"{p}-{n}-{s}" for p, n, s in POINTS])
def test_every_cluster_folder_is_wholly_old_or_new(versions, tmp_path: Path, point: str, n: int, sig: str) -> None:
    root, old, new = versions
    out = tmp_path / "out"
    shutil.copytree(old, out)
    (out / "README.md").write_text("the user's\n")
    before, after = clusters(old), clusters(new)
    assert all(before[name] != after[name] for name in after), "the edit must change every cluster"

    killed = render_all(root, out, f"{point}:{n}:{sig}")
    assert killed.returncode == (-signal.SIGKILL if sig == "KILL" else 130), killed.stderr
    state = clusters(out)
    assert set(state) == set(after)
    mixed = {name: ("old" if files == before[name] else "new" if files == after[name] else "torn")
             for name, files in state.items()}
    assert "torn" not in mixed.values(), mixed
    swapped = n - 1 if point == "before-swap" else n  # clusters are written in order, one swap each
    assert list(mixed.values()) == ["new"] * swapped + ["old"] * (len(mixed) - swapped)

    finished = render_all(root, out)
    assert finished.returncode == 0, finished.stderr
    assert clusters(out) == after
    assert sorted(p.name for p in out.iterdir()) == sorted([*after, "README.md"]), "a staging folder was left"


@pytest.mark.parametrize("sig", ["KILL", "INT"])
def test_the_two_rename_fallback_is_repaired_by_the_next_run(versions, tmp_path: Path, sig: str) -> None:
    """Without renameat2 a kill between the two renames leaves the old content in a marked folder beside
    the missing target (SIGINT puts it back at once); the next run restores it, then writes the new one."""
    root, old, new = versions
    out = tmp_path / "out"
    shutil.copytree(old, out)
    killed = render_all(root, out, f"between-renames:3:{sig}:fallback")
    assert killed.returncode == (-signal.SIGKILL if sig == "KILL" else 130), killed.stderr
    state, before, after = clusters(out), clusters(old), clusters(new)
    third = sorted(after)[2]
    if sig == "INT":
        assert state[third] == before[third]
    else:
        assert third not in state
        (kept,) = [p for p in out.iterdir() if p.name.startswith(f".{third}.cozy-staging-") and p.name.endswith("-old")]
        assert tree(kept) == before[third]
    assert all(state[name] in (before[name], after[name]) for name in state)
    assert render_all(root, out).returncode == 0
    assert clusters(out) == after and not [p for p in out.iterdir() if p.name.startswith(".")]
