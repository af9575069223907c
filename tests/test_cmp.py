"""The Argo CD CMP entry point, run the way argocd-cmp-server runs it: a process in the app dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

from tests.conftest import OVERLAYS, REPO

APP = OVERLAYS / "clusters" / "gpu-apt-01"


def run(cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ARGOCD_")}
    base["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=cwd, capture_output=True,
                          text=True, env={**base, **(env or {})})


def test_generate_prints_only_manifests() -> None:
    proc = run(APP, {"ARGOCD_APP_NAME": "gpu-apt-01", "ARGOCD_APP_REVISION": "abc"})
    assert proc.returncode == 0, proc.stderr
    docs = list(YAML(typ="safe").load_all(proc.stdout))
    assert docs and all({"apiVersion", "kind", "metadata"} <= set(d) for d in docs)
    assert not any(d.get("kind") == "List" for d in docs)


def test_generate_does_not_depend_on_argocd_build_env() -> None:
    plain = run(APP).stdout
    noisy = run(APP, {"ARGOCD_APP_NAME": "x", "ARGOCD_APP_REVISION": "deadbeef", "KUBE_VERSION": "1.30.0",
                      "ARGOCD_APP_NAMESPACE": "somewhere"}).stdout
    assert plain == noisy


def test_vars_parameter_overrides_overlay_vars() -> None:
    params = json.dumps([{"name": "vars", "map": {"domain": "override.example"}}])
    proc = run(APP, {"ARGOCD_APP_PARAMETERS": params})
    assert proc.returncode == 0, proc.stderr
    assert "host: override.example" in proc.stdout


def test_bad_parameters_fail_with_one_line_and_no_stdout() -> None:
    proc = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "colour", "string": "x"}])})
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr.strip() == \
        "error[CMP-PARAMS]: unknown parameter 'colour' (known: vars, strict, kubernetes-version)"


def test_bad_overlay_fails_the_generate(tmp_path: Path) -> None:
    app = tmp_path / "clusters" / "c1"
    app.mkdir(parents=True)
    (app / "cluster.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
                                      "metadata: {name: c1}\nhost: {os: apt}\nplatform: {variant: 1}\n")
    proc = run(app)
    assert proc.returncode == 3 and proc.stdout == ""
    assert "cluster.yaml:5:21: error[OVL-SCHEMA]: platform.variant must be a string, got integer" in proc.stderr


def test_parameters_announcement_is_json() -> None:
    proc = subprocess.run([sys.executable, "-m", "renderer", "cmp", "parameters"], capture_output=True, text=True,
                          cwd=REPO, check=True)
    names = [p["name"] for p in json.loads(proc.stdout)]
    assert names == ["vars", "strict", "kubernetes-version"]


def test_kubernetes_version_parameter() -> None:
    ok = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "kubernetes-version", "string": "1.31"}])})
    assert ok.returncode == 0, ok.stderr
    bad = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "kubernetes-version", "string": "1.2"}])})
    assert bad.returncode == 3 and bad.stdout == "" and "no bundled schemas for Kubernetes '1.2'" in bad.stderr


def test_root_comes_from_the_source_path_when_git_is_excluded(tmp_path: Path) -> None:
    """Argo CD tarballs may exclude .git; the app path may not sit under clusters/ either."""
    repo = tmp_path / "checkout"
    (repo / "fleet" / "prod" / "c1").mkdir(parents=True)
    (repo / "shared").mkdir()
    (repo / "shared" / "base.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
                                               "host: {os: apt}\nplatform: {variant: default}\n")
    (repo / "fleet" / "prod" / "c1" / "cluster.yaml").write_text(
        "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"
        "inherits: [../../../shared/base.yaml]\n")
    app = repo / "fleet" / "prod" / "c1"
    without = run(app)
    assert without.returncode == 3 and "points outside the overlay repository" in without.stderr
    ok = run(app, {"ARGOCD_APP_SOURCE_PATH": "fleet/prod/c1"})
    assert ok.returncode == 0, ok.stderr
    assert "name: cozystack.cozystack-platform" in ok.stdout


def test_repository_root_needs_a_matching_source_path() -> None:
    from renderer.cmp import repository_root

    assert repository_root(Path("/tmp/x/a/b"), "a/b") == Path("/tmp/x")
    assert repository_root(Path("/tmp/x/a/b"), "./a/b/") == Path("/tmp/x")
    assert repository_root(Path("/tmp/x/a/b"), "c/b") is None
    assert repository_root(Path("/tmp/x/a/b"), "../b") is None
    assert repository_root(Path("/tmp/x/a/b"), "") is None


def _cmp_server_env(app: Path, source_path: str) -> dict[str, str]:
    """The request environment argocd-cmp-server adds for an Application with no plugin parameters
    (reposerver/repository/repository.go newEnv + getPluginParamEnvs): the empty parameter list is
    marshalled as JSON null, and no PARAM_* variables are set."""
    return {
        "ARGOCD_APP_NAME": app.name,
        "ARGOCD_APP_NAMESPACE": "cozy-system",
        "ARGOCD_APP_PROJECT_NAME": "default",
        "ARGOCD_APP_REVISION": "3c780acd417f086f8f18d040d0d7020ff55d3ba3",
        "ARGOCD_APP_REVISION_SHORT": "3c780ac",
        "ARGOCD_APP_REVISION_SHORT_8": "3c780acd",
        "ARGOCD_APP_SOURCE_PATH": source_path,
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example.com/platform/clusters.git",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": "1.33.4",
        "KUBE_API_VERSIONS": "v1,v1/ConfigMap,cozystack.io/v1alpha1,cozystack.io/v1alpha1/Package",
        "ARGOCD_APP_PARAMETERS": "null",
    }


def test_application_without_parameters_renders_every_sample(tmp_path: Path) -> None:
    """argo-cd#11900: every parameterless Application sends ARGOCD_APP_PARAMETERS=null."""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(OVERLAYS, repo / "overlays")  # no .git: Argo CD may leave it out of the tarball
    clusters = sorted((repo / "overlays" / "clusters").iterdir())
    assert clusters
    for app in clusters:
        proc = run(app, _cmp_server_env(app, f"overlays/clusters/{app.name}"))
        assert proc.returncode == 0, (app.name, proc.stderr)
        render = subprocess.run([sys.executable, "-m", "renderer", "render", str(app)], capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
        assert render.returncode == 0, render.stderr
        assert list(YAML(typ="safe").load_all(proc.stdout)) == list(YAML(typ="safe").load_all(render.stdout))


def test_null_empty_and_unset_parameters_mean_none() -> None:
    outputs = set()
    for value in ("null", "", " ", None):
        env = {} if value is None else {"ARGOCD_APP_PARAMETERS": value}
        proc = run(APP, env)
        assert proc.returncode == 0, (value, proc.stderr)
        outputs.add(proc.stdout)
    assert len(outputs) == 1
