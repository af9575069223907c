"""Flux postBuild substitution safety (renderer/check/flux.py): `${` reaches the cluster as written."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from renderer.check import flux
from tests.conftest import overlay_doc

# The annotation name and value as kustomize-controller reads them (fluxcd/kustomize-controller @186fb3b,
# api/v1/kustomization_types.go: `kustomize.toolkit.fluxcd.io/substitute=disabled`; DisabledValue = "disabled").
ANNOTATION = ("kustomize.toolkit.fluxcd.io/substitute", "disabled")

SCRIPT = "#!/bin/sh\nexec cat ${HOME}/.profile\n"
MANIFEST = """apiVersion: v1
kind: ConfigMap
metadata: {name: from-file, namespace: tenant-a}
data:
  greeting: hello ${USER}
  plain: nothing to see
"""


@pytest.fixture
def substituting(repo) -> Path:
    """A cluster whose values hold ${HOME} (inline manifest), ${USER} (a manifests: file) and none (the rest)."""
    doc = overlay_doc(
        manifests=[
            "../../extra/script.yaml",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "script", "namespace": "tenant-a"},
             "data": {"run.sh": SCRIPT}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": "wanted", "namespace": "tenant-a",
                "annotations": {ANNOTATION[0]: "enabled"}}, "data": {"v": "${cluster_env}"}},
        ])
    root = repo({"clusters/c1/cluster.yaml": json.dumps(doc, indent=2), "extra/script.yaml": MANIFEST})
    return root / "clusters" / "c1"


def _objects(folder: Path) -> dict[str, dict]:
    return {p.name: YAML(typ="safe").load(p.read_text()) for p in folder.glob("*.yaml") if p.name != "kustomization.yaml"}


def test_out_marks_objects_holding_a_substitution(cli, substituting: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    code, _, err = cli("render", str(substituting), "--out", str(out))
    assert code == 0, err
    objects = _objects(out)
    marked = {name for name, obj in objects.items()
              if (obj["metadata"].get("annotations") or {}).get(ANNOTATION[0]) == ANNOTATION[1]}
    assert marked == {"configmap_tenant-a_script.yaml", "configmap_tenant-a_from-file.yaml"}
    assert objects["configmap_tenant-a_script.yaml"]["data"]["run.sh"] == SCRIPT  # the value itself is untouched
    # the user's own annotation wins: they asked Flux to substitute this one
    assert objects["configmap_tenant-a_wanted.yaml"]["metadata"]["annotations"] == {ANNOTATION[0]: "enabled"}
    # metadata keeps its documented order: name, namespace, labels, annotations
    assert list(objects["configmap_tenant-a_script.yaml"]["metadata"]) == ["name", "namespace", "labels",
                                                                           "annotations"]
    assert cli("render", str(substituting), "--out", str(out), "--check")[0] == 0


def test_stdout_and_argo_cd_output_are_not_annotated(cli, substituting: Path) -> None:
    code, stdout, _ = cli("render", str(substituting))
    assert code == 0 and f"{ANNOTATION[0]}: {ANNOTATION[1]}" not in stdout and "${HOME}" in stdout


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH: the kustomize build is skipped")
def test_marked_folder_builds_with_kubectl_kustomize(cli, substituting: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert cli("render", str(substituting), "--out", str(out))[0] == 0
    built = subprocess.run(["kubectl", "kustomize", str(out)], capture_output=True, text=True, check=True).stdout
    docs = {d["metadata"]["name"]: d for d in YAML(typ="safe").load_all(built)}
    assert docs["script"]["metadata"]["annotations"][ANNOTATION[0]] == ANNOTATION[1]
    assert docs["script"]["data"]["run.sh"] == SCRIPT


def test_check_warns_where_the_user_wrote_it(cli, substituting: Path) -> None:
    code, out, _ = cli("check", "-o", "json", str(substituting))
    assert code == 0
    flux_findings = [f for f in json.loads(out)["findings"] if f["code"] == "FLUX-SUBST"]
    where = sorted((Path(f["file"]).name, f["line"], f["message"].split(" ")[0]) for f in flux_findings)
    text = (substituting / "cluster.yaml").read_text().splitlines()
    # Not ${cluster_env}: its object is opted in (substitute: enabled), and saying render --out marks it
    # disabled would be false (issue 23).
    assert [(n, w) for n, _, w in where] == [("cluster.yaml", "${HOME}"), ("script.yaml", "${USER}")]
    assert all(f["severity"] == "warning" for f in flux_findings)
    home = next(f for f in flux_findings if "${HOME}" in f["message"])
    assert "${HOME}" in text[home["line"] - 1]
    assert cli("check", "--strict", str(substituting))[0] == 1


def test_an_opted_in_manifests_file_is_not_warned_about(cli, repo) -> None:
    opted = MANIFEST.replace("metadata: {name: from-file, namespace: tenant-a}",
                             "metadata: {name: from-file, namespace: tenant-a, annotations: "
                             "{kustomize.toolkit.fluxcd.io/substitute: enabled}}")
    root = repo({"clusters/c1/cluster.yaml": json.dumps(overlay_doc(manifests=["../../extra/cm.yaml"])),
                 "extra/cm.yaml": opted})
    code, out, _ = cli("check", "-o", "json", str(root / "clusters" / "c1"))
    assert code == 0 and [f for f in json.loads(out)["findings"] if f["code"] == "FLUX-SUBST"] == []
    assert flux.opted_in(YAML(typ="safe").load(opted)) and not flux.opted_in(YAML(typ="safe").load(MANIFEST))


def test_escape_is_reported_and_unmarked_input_is_left_alone() -> None:
    found = flux._finding("echo $${HOME}", None)
    assert found is not None and "needs no escaping" in found.message
    assert flux._finding("cost: $5 {braces}", None) is None
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "$HOME"}}
    assert flux.disable_substitution([plain]) == [plain]
    key = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"${k}": "v"}}
    (marked,) = flux.disable_substitution([key])
    assert marked["metadata"]["annotations"] == {ANNOTATION[0]: ANNOTATION[1]} and "annotations" not in key["metadata"]
