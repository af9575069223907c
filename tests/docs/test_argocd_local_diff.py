"""`argocd app diff APP --local DIR --server-side-generate`, as far as it can run without Argo CD.

The CLI uploads the files under DIR whose *base name* matches `--local-include` (default `*.yaml`,
`*.yml`, `*.json`; argo-cd util/io/files/tar.go, filepath.Match on the name) and the repo-server
unpacks them into a fresh work dir, then generates in `<work dir>/<spec.source.path>`
(reposerver/repository/repository.go GenerateManifestWithFiles, apppathutil.Path). So DIR must be the
repository root: the Application's source path is resolved inside it, and `../../base` must be there
too. This test builds that upload from a checkout, runs `cmp generate` where the repo-server would,
and compares with a local render."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cmp_output import render_objects, split_warnings
from tests.conftest import OVERLAYS, REPO

DEFAULT_INCLUDES = ["*.yaml", "*.yml", "*.json"]
SAMPLES = sorted(p.name for p in (OVERLAYS / "clusters").iterdir() if (p / "cluster.yaml").is_file())


def upload(local: Path, work: Path, includes: list[str] = DEFAULT_INCLUDES) -> None:
    """What the repo-server's work dir holds after `--local local --server-side-generate`."""
    for path in local.rglob("*"):
        if path.is_file() and any(fnmatch.fnmatchcase(path.name, pattern) for pattern in includes):
            target = work / path.relative_to(local)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checkout") / "gitops"
    shutil.copytree(OVERLAYS, root / "overlays")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "README.md").write_text("not uploaded\n")
    return root


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER", "KUBE_"))}
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(REPO), **(env or {})})


@pytest.mark.parametrize("name", SAMPLES)
def test_repository_root_upload_generates_what_render_prints(checkout: Path, tmp_path: Path, name: str) -> None:
    work = tmp_path / "manifest-work-dir"
    upload(checkout, work)
    assert not (work / "README.md").exists() and not (work / ".git" / "HEAD").exists()
    source_path = f"overlays/clusters/{name}"
    generated = run(["cmp", "generate"], work / source_path,
                    {"ARGOCD_APP_NAME": f"cozystack-{name}", "ARGOCD_APP_SOURCE_PATH": source_path,
                     "ARGOCD_APP_PARAMETERS": "null"})
    assert generated.returncode == 0, generated.stderr
    rendered = run(["render", source_path], checkout)
    # the same objects; cmp generate adds the render's warnings on the platform Package (README "Warnings in Argo CD")
    objects, warnings = split_warnings(generated.stdout)
    assert objects == render_objects(rendered.stdout)
    assert warnings == [line for line in rendered.stderr.splitlines() if "warning[" in line]
    if not warnings:
        assert generated.stdout == rendered.stdout


def test_every_input_passes_the_default_local_include(checkout: Path) -> None:
    proc = run(["inputs", "--all", "-o", "json", "overlays"], checkout)
    assert proc.returncode == 0, proc.stderr
    names = {Path(p).name for c in json.loads(proc.stdout)["clusters"] for p in c["inputs"]}
    assert all(any(fnmatch.fnmatchcase(n, pattern) for pattern in DEFAULT_INCLUDES) for n in names), names


def test_a_file_outside_the_includes_is_reported_by_its_repository_path(checkout: Path, tmp_path: Path) -> None:
    """A manifests: file named e.g. namespace.manifest is not uploaded without `--local-include`; the error
    names it relative to the repository root, as the user's checkout has it."""
    repo = tmp_path / "gitops"
    shutil.copytree(checkout, repo)
    cluster = repo / "overlays" / "clusters" / "gpu-apt-01" / "cluster.yaml"
    shutil.move(repo / "overlays" / "extra" / "namespace.yaml", repo / "overlays" / "extra" / "namespace.manifest")
    cluster.write_text(cluster.read_text().replace("namespace.yaml", "namespace.manifest"))
    assert run(["render", "overlays/clusters/gpu-apt-01"], repo).returncode == 0
    work = tmp_path / "work"
    upload(repo, work)
    source_path = "overlays/clusters/gpu-apt-01"
    proc = run(["cmp", "generate"], work / source_path, {"ARGOCD_APP_SOURCE_PATH": source_path})
    assert proc.returncode == 3
    assert proc.stderr.startswith("overlays/clusters/gpu-apt-01/cluster.yaml:29:5: error[OVL-PATH]: manifests entry "
                                  "'../../extra/namespace.manifest' does not exist"), proc.stderr
    work2 = tmp_path / "work2"
    upload(repo, work2, [*DEFAULT_INCLUDES, "*.manifest"])
    assert run(["cmp", "generate"], work2 / source_path, {"ARGOCD_APP_SOURCE_PATH": source_path}).returncode == 0
