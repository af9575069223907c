"""The sharded CI recipes (docs/ci/*-sharded.yaml) do what they say: N shard jobs and one merge job
print what one ``check --all`` prints, with its exit code, on a fleet with errors and warnings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.commands.test_shard import generate
from tests.conftest import REPO

DOCS = REPO / "docs" / "ci"


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """As the runners do: bash, stop at the first failing command."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd,
                          env={**os.environ, **env, "PATH": path}, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("gitops")
    generate(top / "overlays", 24)
    (top / ".git").mkdir()
    return top


def one_run(checkout: Path, fmt: str) -> subprocess.CompletedProcess[str]:
    return bash(f"cozy-render check overlays/ --all -o {fmt}", checkout, {})


def test_github_actions_matrix_then_merge(checkout: Path) -> None:
    workflow = YAML(typ="safe").load((DOCS / "github-actions-sharded.yaml").read_text(encoding="utf-8"))
    shards = workflow["jobs"]["check"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(workflow["env"]["SHARDS"]) + 1))
    check = {s.get("id"): s.get("run", "") for s in workflow["jobs"]["check"]["steps"]}["shard"]
    merge = {s.get("id"): s.get("run", "") for s in workflow["jobs"]["merge"]["steps"]}["merge"]
    (checkout / "reports").mkdir()
    for shard in shards:
        env = {**{k: str(v) for k, v in workflow["env"].items()}, "SHARD": str(shard)}
        done = bash(check, checkout, env)
        assert done.returncode == 0, done.stderr
        (checkout / f"check-{shard}.json").rename(checkout / "reports" / f"check-{shard}.json")  # the artifacts
    merged = bash(merge, checkout, {})
    whole = one_run(checkout, "github")
    assert whole.returncode == 3 and "::error " in whole.stdout and "::warning " in whole.stdout
    assert (merged.returncode, merged.stdout, merged.stderr) == (whole.returncode, whole.stdout, whole.stderr)


def test_gitlab_parallel_then_merge(checkout: Path, tmp_path: Path) -> None:
    jobs = YAML(typ="safe").load((DOCS / "gitlab-ci-sharded.yaml").read_text(encoding="utf-8"))
    check, merge = jobs["cozy-render-check"], jobs["cozy-render-merge"]
    assert merge["needs"] == ["cozy-render-check"]
    total = check["parallel"]
    for index in range(1, total + 1):
        env = {**jobs["variables"], "CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(total)}
        done = bash("\n".join(check["script"]), checkout, env)
        assert done.returncode == 0, done.stderr
    merged = bash("\n".join(merge["script"]), checkout, {})
    for report in checkout.glob("check-*.json"):
        report.unlink()
    whole = one_run(checkout, "text")
    assert whole.returncode == 3 and "error[OVL-YAML]" in whole.stderr
    assert (merged.returncode, merged.stdout, merged.stderr) == (whole.returncode, whole.stdout, whole.stderr)
