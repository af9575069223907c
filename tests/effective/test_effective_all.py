"""Issue 24 item 3: ``effective --all`` prints what a loop running ``effective CLUSTER`` over the
clusters prints (stdout byte for byte, stderr line for line, the worst exit code), while rendering the
charts many clusters to a helm process; ``-o json`` holds the loop's documents in one (issue 31)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OVERLAYS, REPO


def _cozy(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, capture_output=True, text=True,
                          check=False, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples, one cluster the renderer refuses, and one the chart fails on (main only)."""
    root = tmp_path_factory.mktemp("effective-all") / "tree"
    shutil.copytree(OVERLAYS, root)
    (root / ".git").mkdir()
    broken = root / "clusters" / "broken-01"
    broken.mkdir()
    (broken / "cluster.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
                                         "metadata: {name: broken-01}\nhost: {os: nope}\n")
    chart_fails = root / "clusters" / "chart-fails-01"
    chart_fails.mkdir()
    (chart_fails / "cluster.yaml").write_text(
        "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: chart-fails-01}\n"
        "host: {os: apt}\nplatform: {variant: isp-full, version: main-3c780ac}\n"
        "packages:\n  cozystack.cozystack-platform:\n    values: {networking: {encryption: true}}\n")
    return root


_LOOPS: dict[str, list[subprocess.CompletedProcess[str]]] = {}


@pytest.mark.parametrize("jobs", ["1", "2"])  # 2: two forked workers, one helm batch each
@pytest.mark.parametrize("fmt", ["yaml", "json", "table"])
def test_effective_all_is_the_loop_over_clusters(helm: str, tree: Path, fmt: str, jobs: str) -> None:
    together = _cozy(["effective", ".", "--all", "-o", fmt, "--helm", helm, "--jobs", jobs], tree)
    if fmt not in _LOOPS:
        _LOOPS[fmt] = [_cozy(["effective", f"clusters/{c.name}", "-o", fmt, "--helm", helm], tree)
                       for c in sorted((tree / "clusters").iterdir()) if (c / "cluster.yaml").is_file()]
    loop = _LOOPS[fmt]
    if fmt == "json":  # one EffectiveList holding each cluster's Effective document (issue 31 item 4)
        document = json.loads(together.stdout)
        assert document["kind"] == "EffectiveList"
        assert document["clusters"] == [json.loads(run.stdout) for run in loop if run.stdout]
        assert together.stdout == json.dumps(document, indent=2) + "\n"
    else:
        assert together.stdout == "".join(run.stdout for run in loop)
    assert together.stderr == "".join(run.stderr for run in loop)
    assert together.returncode == max(run.returncode for run in loop) == 3
    assert "Traceback" not in together.stderr and together.stdout


def test_effective_all_renders_the_charts_in_a_few_helm_processes(helm: str, tree: Path, tmp_path: Path) -> None:
    log = tmp_path / "helm.log"
    logging_helm = tmp_path / "helm"
    logging_helm.write_text(f"#!/bin/sh\necho \"$1\" >> {log}\nexec {helm} \"$@\"\n")
    logging_helm.chmod(0o755)
    done = _cozy(["effective", ".", "--all", "-o", "json", "--helm", str(logging_helm), "--jobs", "1"], tree)
    assert done.returncode == 3
    runs = log.read_text().split()
    # one umbrella per chart version, plus the chart-failing cluster rendered again on its own
    assert runs.count("version") == 1 and runs.count("template") <= 3


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_effective_all_with_the_model_goes_on_past_failing_clusters(tree: Path, fmt: str) -> None:
    """The default judge (the model, no helm at all): the same loop equality, and the refused clusters
    do not stop the others: the output holds every cluster that rendered."""
    together = _cozy(["effective", ".", "--all", "-o", fmt], tree)
    loop = [_cozy(["effective", f"clusters/{c.name}", "-o", fmt], tree)
            for c in sorted((tree / "clusters").iterdir()) if (c / "cluster.yaml").is_file()]
    if fmt == "json":
        document = json.loads(together.stdout)
        assert document["clusters"] == [json.loads(run.stdout) for run in loop if run.stdout]
        assert {c["chart"]["mode"] for c in document["clusters"]} == {"model"}
        assert len(document["clusters"]) == sum(1 for run in loop if run.returncode == 0) >= 7
    else:
        assert together.stdout == "".join(run.stdout for run in loop)
    assert together.stderr == "".join(run.stderr for run in loop)
    assert together.returncode == max(run.returncode for run in loop) == 3
