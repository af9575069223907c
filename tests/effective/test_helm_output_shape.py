"""helm's output is checked for shape before it is composed (issue 34 item 14).

A ``--platform-chart`` template can emit any YAML: thousands of nested lists overflowed the stack
of every later walk (exit 4), 200,000 crashed libyaml's composer (SIGSEGV), and anchors can make a
small text a huge tree. Each is one located PLT-HELM line, exit 3. And when a chart fails, ``effective
--all`` leaves no scratch folder and no helm running, though its workers are terminated mid-helm.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from renderer.effective.helm import OUTPUT_DEPTH, HelmFailure, _documents
from renderer.platform_chart import chart_dir
from tests.conftest import REPO, overlay_doc

HEAD = "---\n# Source: cozy-platform/templates/bundles/zz.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n"


@pytest.mark.parametrize("depth", [OUTPUT_DEPTH, 3_000, 200_000])
def test_output_nested_too_deep_is_helms_failure(depth: int) -> None:
    with pytest.raises(HelmFailure) as refused:
        _documents(HEAD + "data:\n  x: " + "[" * depth + "]" * depth + "\n")
    assert refused.value.message == ("the chart's output of cozy-platform/templates/bundles/zz.yaml nests deeper "
                                     f"than {OUTPUT_DEPTH} levels: not a Kubernetes object")


def test_output_just_inside_the_depth_parses() -> None:
    depth = OUTPUT_DEPTH - 2  # the document and data mappings are two levels
    (doc,) = _documents(HEAD + "data:\n  x: " + "[" * depth + "]" * depth + "\n")
    assert doc["metadata"] == {"name": "m"}


def test_aliases_cannot_expand_past_the_text() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    with pytest.raises(HelmFailure, match="more nodes than characters once its aliases are expanded"):
        _documents(HEAD + "data:\n  " + "\n  ".join(lines) + "\n")
    shallow = "data: &d {a: &x [1, 2], b: *x}\nother: *d\n"
    (doc,) = _documents(HEAD + shallow)
    assert doc["other"] == {"a": [1, 2], "b": [1, 2]}


def test_aliases_cannot_nest_past_the_depth() -> None:
    chain = "\n".join(f"l{i}: &l{i} [*l{i - 1}]" for i in range(1, 70))
    with pytest.raises(HelmFailure, match="once its aliases are expanded"):
        _documents(HEAD + "data:\n  l0: &l0 [x]\n  " + chain.replace("\n", "\n  ") + "\n")


def test_a_chart_emitting_deep_output_is_one_located_line(helm: str, cli, cluster, tmp_path: Path) -> None:
    chart = tmp_path / "my-chart"
    shutil.copytree(chart_dir("v1.6.2"), chart)
    (chart / "templates" / "bundles" / "zz-deep.yaml").write_text(HEAD.split("\n", 2)[2] + "data:\n  x: "
                                                                 + "[" * 3_000 + "]" * 3_000 + "\n")
    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": "v1.6.3-rc"}))
    code, out, err = cli("effective", str(folder), "--helm", helm, "--platform-chart", str(chart))
    assert (code, out) == (3, "")
    assert err == (f"{chart}/Chart.yaml:1:1: error[PLT-HELM]: the chart's output of cozy-platform/templates/bundles/"
                   f"zz-deep.yaml nests deeper than {OUTPUT_DEPTH} levels: not a Kubernetes object\n")


def test_effective_all_goes_on_past_a_helm_crash_and_leaves_nothing_behind(helm: str, tmp_path: Path) -> None:
    """A helm that crashes for the first cluster's variant: that cluster is one PLT-HELM line (exit 3),
    the second is still rendered and printed, as a loop over the clusters would, and no helm process
    or scratch file outlives the run."""
    wrapper = tmp_path / "helm"
    # Every template call crashes but the second cluster's own: the batch of both, then the first's alone.
    wrapper.write_text("#!/bin/sh\ncase \"$*\" in\n"
                       f"  *values-isp-full-generic.yaml*) exec {helm} \"$@\";;\n"
                       "  template*) echo 'panic: boom' >&2; exit 2;;\n"
                       f"esac\nexec {helm} \"$@\"\n")
    wrapper.chmod(0o755)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name, variant in (("c1", "isp-full"), ("c2", "isp-full-generic")):
        (repo / "clusters" / name).mkdir(parents=True)
        (repo / "clusters" / name / "cluster.yaml").write_text(
            f"apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {{name: {name}}}\n"
            f"host: {{os: apt}}\nplatform: {{variant: {variant}}}\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER"))}
    env.update(PYTHONPATH=str(REPO), TMPDIR=str(scratch))
    proc = subprocess.run([sys.executable, "-m", "renderer", "effective", "--all", ".", "-o", "json", "--jobs", "2",
                           "--helm", str(wrapper)], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and "error[PLT-HELM]: helm crashed (panic: boom; exit 2)" in proc.stderr, proc.stderr
    assert [c["cluster"] for c in json.loads(proc.stdout)["clusters"]] == ["c2"]
    assert sorted(p.name for p in scratch.iterdir()) == []
    for _ in range(100):  # a process killed with its group is reaped by init: give it a moment to be gone
        running = subprocess.run(["pgrep", "-f", str(wrapper)], capture_output=True, text=True).stdout.split()
        if not running:
            break
        time.sleep(0.02)
    assert running == [], "a helm process outlived cozy-render"
