""".pre-commit-hooks.yaml: each hook's command run the way pre-commit runs it: argv is
shlex.split(entry) + args (+ the staged file names when pass_filenames), in the repository root, with
the hook's environment (where `cozy-render` is installed) first on PATH."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import OVERLAYS, REPO

HOOKS = {h["id"]: h for h in YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())}
BIN = Path(sys.executable).parent


def run_hook(hook_id: str, repo: Path, staged: list[str]) -> subprocess.CompletedProcess[str] | None:
    """None when pre-commit would skip the hook (no staged file matches `files`)."""
    hook = HOOKS[hook_id]
    matching = [f for f in staged if re.search(hook.get("files", ""), f)]
    if not matching:
        return None
    argv = [*shlex.split(hook["entry"]), *hook.get("args", [])]
    if hook.get("pass_filenames", True):
        argv += matching
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True, env=env)


@pytest.fixture
def gitops(tmp_path: Path) -> Path:
    if shutil.which("cozy-render", path=str(BIN)) is None:
        pytest.skip(f"no cozy-render console script in {BIN} (install the package: pip install -e .)")
    repo = tmp_path / "gitops"
    shutil.copytree(OVERLAYS, repo / "overlays")
    (repo / ".git").mkdir()
    subprocess.run([BIN / "cozy-render", "render", "--all", "overlays/", "--out", "rendered/"], cwd=repo, check=True,
                   capture_output=True)
    return repo


def test_hooks_are_well_formed() -> None:
    assert set(HOOKS) == {"cozy-render-check", "cozy-render-rendered"}
    for hook in HOOKS.values():
        assert hook["language"] == "python" and hook["entry"] == "cozy-render" and hook["pass_filenames"] is False
        assert {"id", "name", "entry", "language"} <= set(hook)


def test_both_hooks_pass_on_a_current_repository(gitops: Path) -> None:
    staged = ["overlays/clusters/gpu-apt-01/cluster.yaml"]
    for hook_id in HOOKS:
        proc = run_hook(hook_id, gitops, staged)
        assert proc is not None and proc.returncode == 0, (hook_id, proc and proc.stderr)


def test_check_hook_fails_on_a_rule_error(gitops: Path) -> None:
    cluster = gitops / "overlays" / "clusters" / "gpu-talos-01" / "cluster.yaml"
    cluster.write_text(cluster.read_text().replace("variant: container", "variant: vgpu"))  # GPU-05: talos x vgpu
    proc = run_hook("cozy-render-check", gitops, ["overlays/clusters/gpu-talos-01/cluster.yaml"])
    assert proc is not None and proc.returncode == 1
    assert re.search(r"overlays/clusters/gpu-talos-01/cluster\.yaml:\d+:\d+: error\[", proc.stderr), proc.stderr


def test_rendered_hook_fails_when_the_output_is_stale(gitops: Path) -> None:
    cluster = gitops / "overlays" / "clusters" / "gpu-apt-01" / "cluster.yaml"
    cluster.write_text(cluster.read_text().replace("gpu-apt-01.example.org", "gpu-apt-01.example.net"))
    proc = run_hook("cozy-render-rendered", gitops, ["overlays/clusters/gpu-apt-01/cluster.yaml"])
    assert proc is not None and proc.returncode == 1 and "configmap_tenant-example_cluster-info.yaml" in proc.stderr


def test_hooks_skip_unrelated_changes(gitops: Path) -> None:
    assert run_hook("cozy-render-check", gitops, ["README.md", "rendered/gpu-apt-01/kustomization.yaml"]) is None
    assert run_hook("cozy-render-rendered", gitops, ["README.md"]) is None
    assert run_hook("cozy-render-rendered", gitops, ["rendered/gpu-apt-01/kustomization.yaml"]) is not None
