"""The one guarded write path (issue 25 items 1, 2, 5, 6, 12; issue 23 item 8; issue 20 item 8).

Every command that writes files (``render --out``, ``node-config --out``, ``init``, ``schemas export``)
goes through renderer.output's checks, lock and atomic swap; ``--check`` reads only regular files.
These run the real CLI in child processes where the process matters (umask, PID namespaces, locks).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from renderer import output
from renderer.output import guard
from tests.conftest import REPO

HEAD = ("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"
        "host: {os: apt, cniPluginsProvided: true}\nplatform: {variant: isp-full-generic}\n")
VLANS = ("vlans:\n  - {name: vlan100, id: 100, uplink: eno2, bridge: br100, namespaces: [tenant-a]}\n")


def cozy(*args: str, cwd: Path, umask: int | None = None, wrap: list[str] | None = None,
         wait: bool = True) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "ARGOCD_"))}
    env["PYTHONPATH"] = str(REPO)
    argv = [*(wrap or []), sys.executable, "-m", "renderer", *args]
    kwargs = {"cwd": cwd, "env": env, "text": True, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
              "preexec_fn": (lambda: os.umask(umask)) if umask is not None else None}
    if not wait:
        return subprocess.Popen(argv, **kwargs)  # type: ignore[call-overload]
    return subprocess.run(argv, check=False, timeout=120, **kwargs)  # type: ignore[call-overload]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "clusters" / "c1").mkdir(parents=True)
    (root / "clusters" / "c1" / "cluster.yaml").write_text(HEAD + VLANS)
    return root


def state(folder: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = ("link", os.readlink(path)) if path.is_symlink() else \
            path.read_bytes() if path.is_file() else "dir"
    return found


# --- never through a symlink out of the repository (item 6) -------------------------------------------

def test_out_through_a_committed_symlink_is_refused_and_prunes_nothing(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-team" / "rendered"
    (other / "theirs").mkdir(parents=True)
    (other / "theirs" / output.MARK).write_text(output.MARK_TEXT)
    (other / "theirs" / "kustomization.yaml").write_text("# theirs\n")
    os.symlink(other, tree / "rendered")
    before = state(tmp_path / "other-team")
    for args in (["render", "clusters/c1", "--out", "rendered/c1"], ["render", ".", "--all", "--out", "rendered"],
                 ["node-config", "clusters/c1", "--out", "rendered/nodes"]):
        done = cozy(*args, cwd=tree)
        assert done.returncode == 3 and "error[OUT-UNSAFE]" in done.stderr and "symlink" in done.stderr, done.stderr
        assert done.stdout == ""
    assert state(tmp_path / "other-team") == before


def test_init_through_a_symlinked_clusters_folder_is_refused(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.move(tree / "clusters", outside)
    os.symlink(outside, tree / "clusters")
    before = state(outside)
    done = cozy("init", "c2", "--os", "apt", "--gpu", "none", "--root", str(tree), cwd=tree)
    assert done.returncode == 3 and "error[OUT-UNSAFE]" in done.stderr, done.stderr
    assert state(outside) == before


def test_out_inside_the_trees_clusters_folder_is_refused(tree: Path) -> None:
    """issue 20 item 8: clusters/rendered would be taken for a cluster (an Argo CD Application)."""
    done = cozy("render", "clusters/c1", "--out", "clusters/rendered", cwd=tree)
    assert done.returncode == 3 and "error[OUT-UNSAFE]" in done.stderr and "clusters" in done.stderr
    assert not (tree / "clusters" / "rendered").exists()


def test_every_writer_refuses_the_repository_and_a_users_folder(tree: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("a user's file\n")
    before = state(tmp_path)
    for args, code in ((["node-config", "clusters/c1", "--out", "."], "OUT-UNSAFE"),
                       (["node-config", "clusters/c1", "--out", "clusters/c1"], "OUT-UNSAFE"),
                       (["node-config", "clusters/c1", "--out", str(mine)], "OUT-OWNED"),
                       (["render", "clusters/c1", "--out", str(mine)], "OUT-OWNED"),
                       (["schemas", "export", str(mine)], "OUT-OWNED"),
                       (["schemas", "export", ".git/schemas"], "OUT-UNSAFE")):
        done = cozy(*args, cwd=tree)
        assert done.returncode == 3 and f"error[{code}]" in done.stderr, (args, done.stderr)
    assert state(tmp_path) == before


def test_schemas_export_replaces_only_its_own_folder(tree: Path, tmp_path: Path) -> None:
    target = tmp_path / "schemas"
    assert cozy("schemas", "export", str(target), cwd=tree).returncode == 0
    (target / "stale.json").write_text("{}")
    assert cozy("schemas", "export", str(target), cwd=tree).returncode == 0
    assert (target / output.SCHEMAS_MARK).is_file() and not (target / "stale.json").exists()


# --- modes from the umask (issue 23 item 8) ------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_modes_follow_the_umask(tree: Path, umask: int) -> None:
    assert cozy("render", "clusters/c1", "--out", "rendered/c1", cwd=tree, umask=umask).returncode == 0
    assert cozy("node-config", "clusters/c1", "--out", "nodes", cwd=tree, umask=umask).returncode == 0
    done = cozy("init", "c2", "--os", "apt", "--gpu", "none", cwd=tree, umask=umask)
    assert done.returncode in (0, 1), done.stderr
    folders = [tree / "rendered", tree / "rendered" / "c1", tree / "nodes", tree / "clusters" / "c2",
               *(p for p in (tree / "nodes").rglob("*") if p.is_dir())]
    files = [*(tree / "rendered" / "c1").iterdir(), *(p for p in (tree / "nodes").rglob("*") if p.is_file()),
             tree / "clusters" / "c2" / "cluster.yaml"]
    assert {oct(p.stat().st_mode & 0o777) for p in folders} == {oct(0o777 & ~umask)}
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {oct(0o666 & ~umask)}
    assert [p.name for p in (tree / "clusters" / "c2").iterdir()] == ["cluster.yaml"]  # no staged file left


# --- one writer at a time, across PID namespaces (item 5) ----------------------------------------------

def _unshare() -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--pid", "--fork", "--mount-proc", "true"],
                                         capture_output=True, check=False).returncode != 0:
        pytest.skip("unshare --pid is not available here (needs util-linux and CAP_SYS_ADMIN)")
    return [unshare, "--pid", "--fork", "--mount-proc"]


def _complete(folder: Path) -> bool:
    listed = [line[2:] for line in (folder / output.KUSTOMIZATION).read_text().splitlines() if line.startswith("- ")]
    return (folder / output.MARK).is_file() and all((folder / name).is_file() for name in listed) and \
        {p.name for p in folder.iterdir()} == {*listed, output.KUSTOMIZATION, output.MARK}


def test_a_writer_waits_for_the_lock_held_in_another_pid_namespace(tree: Path) -> None:
    wrap = _unshare()
    (tree / "rendered").mkdir()
    fd = os.open(tree / "rendered", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        proc = cozy("render", "clusters/c1", "--out", "rendered/c1", cwd=tree, wrap=wrap, wait=False)
        assert isinstance(proc, subprocess.Popen)
        time.sleep(3)
        assert proc.poll() is None and not (tree / "rendered" / "c1").exists(), "wrote while the lock was held"
    finally:
        os.close(fd)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert _complete(tree / "rendered" / "c1")


def test_concurrent_writers_in_separate_pid_namespaces_publish_whole_folders(tree: Path) -> None:
    wrap = _unshare()
    for _ in range(2):
        procs = [cozy("render", ".", "--all", "--out", "rendered", cwd=tree, wrap=wrap, wait=False) for _ in range(3)]
        results = [p.communicate(timeout=120) for p in procs]  # type: ignore[union-attr]
        assert [p.returncode for p in procs] == [0, 0, 0], results  # type: ignore[union-attr]
        assert _complete(tree / "rendered" / "c1")
        assert [p.name for p in (tree / "rendered").iterdir()] == ["c1"], "a staging folder was left"


# --- --check reads only regular files inside the folder (item 2) --------------------------------------

@pytest.mark.parametrize("fmt", [[], ["-o", "json"]])
def test_check_names_a_committed_symlink_and_never_prints_its_target(tree: Path, tmp_path: Path,
                                                                     fmt: list[str]) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=do-not-print-me\n")
    assert cozy("render", "clusters/c1", "--out", "rendered/c1", cwd=tree).returncode == 0
    victim = next(p for p in (tree / "rendered" / "c1").iterdir() if p.name.startswith("package_"))
    victim.unlink()
    victim.symlink_to(secret)
    done = cozy("render", "clusters/c1", "--out", "rendered/c1", "--check", *fmt, cwd=tree)
    assert done.returncode == 3, done.stderr
    assert "do-not-print-me" not in done.stdout + done.stderr
    assert f"{victim.relative_to(tree)}: error[OUT-LINK]" in done.stderr, done.stderr
    (tree / "rendered" / "c1" / "extra.yaml").symlink_to("/proc/self/environ")
    victim.unlink()
    victim.write_text("x: 1\n")
    done = cozy("render", "clusters/c1", "--out", "rendered/c1", "--check", *fmt, cwd=tree)
    assert done.returncode == 3 and "extra.yaml: error[OUT-LINK]" in done.stderr, done.stderr


def test_check_reports_an_oversized_file_without_diffing_it(tree: Path) -> None:
    assert cozy("render", "clusters/c1", "--out", "rendered/c1", cwd=tree).returncode == 0
    big = tree / "rendered" / "c1" / "kustomization.yaml"
    big.write_bytes(b"x: 1\n" * (output.MAX_CHECK_FILE_BYTES // 5 + 1))
    done = cozy("render", "clusters/c1", "--out", "rendered/c1", "--check", "-o", "json", cwd=tree)
    assert done.returncode == 1
    (entry,) = json.loads(done.stdout)["stale"]
    assert entry["status"] == "out of date" and "larger than" in entry["diff"]


# --- litter (item 12) ------------------------------------------------------------------------------------

def test_a_run_killed_before_its_mark_leaves_nothing_after_the_next_run(tree: Path) -> None:
    assert cozy("render", "clusters/c1", "--out", "rendered/c1", cwd=tree).returncode == 0
    (tree / "rendered" / f".c1{guard._STAGING}4242-early").mkdir()  # mkdtemp done, killed before the mark
    assert cozy("render", "clusters/c1", "--out", "rendered/c1", cwd=tree).returncode == 0
    assert [p.name for p in (tree / "rendered").iterdir()] == ["c1"]


# --- the process's own streams (items 8, 12) -------------------------------------------------------------

def test_a_closed_stderr_keeps_the_manifests(tree: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "ARGOCD_"))}
    env["PYTHONPATH"] = str(REPO)
    fresh = subprocess.run([sys.executable, "-m", "renderer", "render", "clusters/c1"], cwd=tree, env=env,
                           capture_output=True, check=False)
    closed = subprocess.run([sys.executable, "-m", "renderer", "render", "clusters/c1"], cwd=tree, env=env,
                            stdout=subprocess.PIPE, preexec_fn=lambda: os.close(2), check=False)
    assert fresh.returncode == closed.returncode == 0
    assert closed.stdout == fresh.stdout and b"kind: Package" in closed.stdout


@pytest.mark.parametrize("where", ["/dev/full", "closed"])
def test_an_unwritable_stdout_is_a_refusal_not_an_internal_error(tree: Path, where: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "ARGOCD_"))}
    env["PYTHONPATH"] = str(REPO)
    with open("/dev/full" if where == "/dev/full" else os.devnull, "wb") as sink:
        done = subprocess.run([sys.executable, "-m", "renderer", "render", "clusters/c1"], cwd=tree, env=env,
                              stdout=sink, stderr=subprocess.PIPE, text=True, check=False,
                              preexec_fn=(lambda: os.close(1)) if where == "closed" else None)
    assert done.returncode == 3 and done.stderr.startswith("<stdout>: error[OUT-STREAM]: "), done.stderr
    assert done.stderr.count("\n") == 1
