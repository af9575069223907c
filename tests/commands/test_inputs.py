"""`cozy-render inputs` (renderer/inputs.py) against the files a render really opens, and the shipped
ApplicationSet's manifest-generate-paths against every sample's inputs."""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import OVERLAYS, REPO

SAMPLES = sorted(p.name for p in (OVERLAYS / "clusters").iterdir() if (p / "cluster.yaml").is_file())

# Runs the real console entry point with an audit hook that notes every file the process opens
# (builtins.open, io.open and os.open all raise the "open" audit event), then writes them out.
TRACE = """
import json, os, sys
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.append(os.path.realpath(os.fsdecode(args[0])))
sys.addaudithook(hook)
import atexit
atexit.register(lambda: open(os.environ["TRACE_OUT"], "w").write(json.dumps(opened)))
from renderer.entry import main
sys.argv[0] = "cozy-render"
main()
"""


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inputs") / "repo"
    shutil.copytree(OVERLAYS, root / "overlays")
    (root / ".git").mkdir()
    return root.resolve()


def traced_opens(args: list[str], cwd: Path, root: Path, tmp: Path) -> set[str]:
    out = tmp / "trace.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER"))}
    proc = subprocess.run([sys.executable, "-c", TRACE, *args], cwd=cwd, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(REPO), "TRACE_OUT": str(out)})
    assert proc.returncode == 0, proc.stderr
    opened = json.loads(out.read_text())
    return {Path(p).relative_to(root).as_posix() for p in opened
            if Path(p).is_file() and root in Path(p).parents and p != str(out)}


def inputs_of(args: list[str], cwd: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "renderer", "inputs", "-o", "json", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", SAMPLES)
def test_inputs_agree_with_the_files_a_render_opens(checkout: Path, tmp_path: Path, name: str) -> None:
    cluster = f"overlays/clusters/{name}"
    opened = traced_opens(["render", cluster], checkout, checkout, tmp_path)
    (listed,) = inputs_of([cluster], checkout)["clusters"]
    assert opened == set(listed["inputs"]), name
    assert listed["cluster"] == f"{cluster}/cluster.yaml" and listed["cluster"] in listed["inputs"]


def test_inputs_include_variants_files_inside_the_repository(checkout: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(checkout, repo)
    repo = repo.resolve()
    shutil.copytree(REPO / "variants" / "vlan", repo / "my-variants" / "vlan")
    args = ["--variants", "my-variants", "overlays/clusters/vlan-apt-01"]
    opened = traced_opens(["render", *args], repo, repo, tmp_path)
    (listed,) = inputs_of(args, repo)["clusters"]
    assert "my-variants/vlan/cni.yaml" in opened
    assert opened == set(listed["inputs"])


def test_text_output_and_all(checkout: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "renderer", "inputs", "overlays/clusters/gpu-apt-01"], cwd=checkout,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    assert proc.stdout.splitlines() == ["overlays/base/cluster.yaml", "overlays/clusters/gpu-apt-01/cluster.yaml",
                                        "overlays/extra/namespace.yaml"]
    every = subprocess.run([sys.executable, "-m", "renderer", "inputs", "--all", "overlays"], cwd=checkout,
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    names = {line.split("\t")[0] for line in every.stdout.splitlines()}
    assert names == set(SAMPLES)


def test_broken_overlay_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "clusters" / "c1").mkdir(parents=True)
    (tmp_path / "clusters" / "c1" / "cluster.yaml").write_text("kind: [\n")
    proc = subprocess.run([sys.executable, "-m", "renderer", "inputs", "clusters/c1"], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 3 and proc.stdout == "" and "error[OVL-YAML]" in proc.stderr


# --- the shipped ApplicationSet ------------------------------------------------------------------------------

def refresh_paths(annotation: str, source_path: str) -> list[str]:
    """argo-cd util/app/path/path.go GetSourceRefreshPaths: ';'-separated, trimmed; '/x' is repository-
    absolute, anything else joins the Application's source path."""
    paths = []
    for item in (i.strip() for i in annotation.split(";")):
        if not item:
            continue
        paths.append(item[1:] if item.startswith("/") else posixpath.normpath(posixpath.join(source_path, item)))
    return paths


def covered(changed: str, paths: list[str]) -> bool:
    """AppFilesHaveChanged for one changed file: equal, below (EnforceToCurrentRoot) or a filepath.Match glob."""
    f = "/" + changed
    for item in ("/" + p for p in paths):
        if f == item or f.startswith(item.rstrip("/") + "/") or (fnmatch.fnmatchcase(f, item) and
                                                                  f.count("/") == item.count("/")):
            return True
    return False


def annotation_for(name: str) -> tuple[str, str]:
    appset = YAML(typ="safe").load((REPO / "docs" / "argocd" / "applicationset.yaml").read_text())
    (generator,) = appset["spec"]["generators"]
    (files,) = generator["git"]["files"]
    # a files generator's .path.path is the matched file's folder (argo-cd applicationset/generators/git.go)
    source_path = files["path"].replace("*", name).rsplit("/", 1)[0]
    template = appset["spec"]["template"]
    raw = template["metadata"]["annotations"]["argocd.argoproj.io/manifest-generate-paths"]
    values = {"{{ .path.path }}": source_path, "{{ .path.basename }}": name}
    for key, value in values.items():
        raw = raw.replace(key, value)
    assert "{{" not in raw, raw
    assert template["spec"]["source"]["path"] == "{{ .path.path }}"
    return raw, source_path


def uncovered_inputs(annotation: str, source_path: str, inputs: list[str]) -> list[str]:
    paths = refresh_paths(annotation, source_path)
    return [i for i in inputs if not covered(i, paths)]


@pytest.mark.parametrize("name", SAMPLES)
def test_manifest_generate_paths_cover_every_input(name: str) -> None:
    annotation, source_path = annotation_for(name)
    (listed,) = inputs_of([source_path], REPO)["clusters"]
    assert uncovered_inputs(annotation, source_path, listed["inputs"]) == [], annotation


def test_the_old_annotation_would_have_been_caught() -> None:
    (listed,) = inputs_of(["overlays/clusters/gpu-apt-01"], REPO)["clusters"]
    assert uncovered_inputs(".;../../base", "overlays/clusters/gpu-apt-01", listed["inputs"]) == \
        ["overlays/extra/namespace.yaml"]


def test_refresh_path_semantics() -> None:
    assert refresh_paths(" .; ../../base ;;/overlays/extra", "overlays/clusters/a") == \
        ["overlays/clusters/a", "overlays/base", "overlays/extra"]
    assert covered("overlays/base/x.yaml", ["overlays/base"]) and not covered("overlays/basement/x", ["overlays/base"])
    assert covered("overlays/extra/a.yaml", ["overlays/extra/*.yaml"])
    assert not covered("overlays/extra/sub/a.yaml", ["overlays/extra/*.yaml"])
