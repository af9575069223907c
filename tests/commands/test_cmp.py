"""The Argo CD CMP entry point, run the way argocd-cmp-server runs it: a process in the app dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

from tests.cmp_output import WARNINGS_ANNOTATION, render_objects, split_warnings
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


def test_generate_does_not_depend_on_the_other_build_variables() -> None:
    """Only the parameters, the settings' env entries and KUBE_VERSION (which picks schemas, not objects) count."""
    plain = run(APP).stdout
    noisy = run(APP, {"ARGOCD_APP_NAME": "x", "ARGOCD_APP_REVISION": "deadbeef", "KUBE_VERSION": "1.30.0",
                      "ARGOCD_APP_NAMESPACE": "somewhere", "KUBE_API_VERSIONS": "v1,apps/v1",
                      "ARGOCD_ENV_unrelated": "x"}).stdout
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
        "error[CMP-PARAMS]: unknown parameter 'colour' (known: vars, strict, kubernetes-version, chart)"


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
    assert names == ["vars", "strict", "kubernetes-version", "chart"]


def test_plugin_yaml_announces_the_same_parameters_statically() -> None:
    """Issue 20 item 4: static announcements, so an app-details request runs no command in the sidecar;
    `cmp parameters` keeps printing the same list for tools that call it."""
    plugin = YAML(typ="safe").load((REPO / "docs" / "argocd" / "install" / "plugin.yaml").read_text())
    proc = subprocess.run([sys.executable, "-m", "renderer", "cmp", "parameters"], capture_output=True, text=True,
                          cwd=REPO, check=True)
    assert plugin["spec"]["parameters"] == {"static": json.loads(proc.stdout)}


# --- warnings Argo CD shows (issue 20 item 5) ----------------------------------------------------------------

def _platform_package(stream: str) -> dict:
    (package,) = [d for d in YAML(typ="safe").load_all(stream)
                  if d["kind"] == "Package" and d["metadata"]["name"] == "cozystack.cozystack-platform"]
    return package


def test_warnings_go_on_the_platform_package() -> None:
    proc = run(APP, _cmp_server_env(APP, "overlays/clusters/gpu-apt-01"))
    assert proc.returncode == 0, proc.stderr
    stderr_warnings = [line for line in proc.stderr.splitlines() if "warning[" in line]
    assert stderr_warnings and any("warning[PLT-11]" in line for line in stderr_warnings)
    annotation = _platform_package(proc.stdout)["metadata"]["annotations"][WARNINGS_ANNOTATION]
    assert annotation.split("\n") == stderr_warnings  # the very lines the sidecar logs
    assert run(APP, _cmp_server_env(APP, "overlays/clusters/gpu-apt-01")).stdout == proc.stdout  # deterministic


def test_a_render_without_warnings_has_no_annotation(tmp_path: Path) -> None:
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(OVERLAYS, repo / "overlays")
    quiet = []
    for app in sorted((repo / "overlays" / "clusters").iterdir()):
        proc = run(app, _cmp_server_env(app, f"overlays/clusters/{app.name}"))
        assert proc.returncode == 0, proc.stderr
        if "warning[" not in proc.stderr:
            quiet.append(app.name)
            assert WARNINGS_ANNOTATION not in proc.stdout
            render = subprocess.run([sys.executable, "-m", "renderer", "render", str(app)], capture_output=True,
                                    text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
            assert proc.stdout == render.stdout  # byte for byte
    assert quiet, "at least one sample renders without warnings"


def test_strict_fails_instead_of_annotating() -> None:
    proc = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "strict", "string": "true"}])})
    assert proc.returncode == 3 and proc.stdout == ""


def test_warnings_text_is_cut_with_a_count() -> None:
    from renderer.cmp import MAX_WARNINGS_SHOWN, warnings_text
    from renderer.errors import WARNING, Finding, Location

    findings = [Finding("PLT-11", f"message {i}", Location("c.yaml", i + 1, 1), WARNING) for i in range(30)]
    lines = warnings_text(findings).split("\n")
    assert len(lines) == MAX_WARNINGS_SHOWN + 1
    assert lines[0] == "c.yaml:1:1: warning[PLT-11]: message 0"
    assert lines[-1] == f"... and {30 - MAX_WARNINGS_SHOWN} more (cozy-render check lists them all)"


def test_with_warnings_leaves_the_input_objects_alone() -> None:
    from renderer.cmp import with_warnings
    from renderer.errors import WARNING, Finding

    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}},
               {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": {"name": "cozystack.x"}}]
    found = [Finding("GPU-17", "m", None, WARNING)]
    out = with_warnings(objects, found)
    assert out[1]["metadata"]["annotations"] == {WARNINGS_ANNOTATION: "warning[GPU-17]: m"}  # no platform: first
    assert "annotations" not in objects[1]["metadata"] and out[0] is objects[0]
    assert with_warnings(objects[:1], found) == objects[:1]  # no Package: stderr only
    assert with_warnings(objects, []) is objects


def test_kubernetes_version_parameter() -> None:
    ok = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "kubernetes-version", "string": "1.31"}])})
    assert ok.returncode == 0, ok.stderr
    bad = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "kubernetes-version", "string": "1.2"}])})
    assert bad.returncode == 3 and bad.stdout == "" and "no bundled schemas for Kubernetes '1.2'" in bad.stderr
    assert "error[CMP-PARAMS]: parameter kubernetes-version: " in bad.stderr  # issue 23: a parameter, not SCHEMA


def test_an_emptied_vars_map_is_no_vars() -> None:
    """Argo CD sends a map parameter the user emptied as {"map": null} (Go's nil map)."""
    ok = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "vars", "map": None}])})
    assert ok.returncode == 0, ok.stderr


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
    assert repository_root(Path("/tmp/x/a/b"), "") is None


def test_checkout_of_a_sub_tree_sent_with_manifest_generate_paths() -> None:
    """--plugin-use-manifest-generate-paths: the tarball is the annotation paths' common root only."""
    from renderer.cmp import Checkout, checkout

    server = Path("/tmp/_cmp_server/0f3c")
    assert checkout(server / "overlays/clusters/c1", "overlays/clusters/c1") == Checkout(server, "")
    assert checkout(server / "clusters/c1", "overlays/clusters/c1") == Checkout(server, "overlays")
    assert checkout(server / "c1", "fleet/overlays/c1") == Checkout(server, "fleet/overlays")
    assert checkout(server / "clusters/c2", "overlays/clusters/c1") is None  # not this Application's path
    assert checkout(Path("/tmp/elsewhere/clusters/c1"), "overlays/clusters/c1") is None  # not a cmp-server dir


def test_sub_tree_checkout_renders_with_repository_paths(tmp_path: Path) -> None:
    """The shipped ApplicationSet's annotation has common root overlays/: that is all the sidecar gets."""
    import shutil

    server = tmp_path / "_cmp_server" / "5e1d"
    shutil.copytree(OVERLAYS, server)  # the contents of overlays/, at the top; no .git
    app = server / "clusters" / "gpu-apt-01"
    env = _cmp_server_env(app, "overlays/clusters/gpu-apt-01")
    proc = run(app, env)
    assert proc.returncode == 0, proc.stderr
    assert "overlays/clusters/gpu-apt-01/cluster.yaml:20:3: warning[PLT-11]" in proc.stderr
    assert proc.stdout == run(APP).stdout
    base = server / "base" / "cluster.yaml"
    base.write_text(base.read_text() + "platform: {variant: 7}\n")
    broken = run(app, env)
    assert broken.returncode == 3 and broken.stderr.startswith("overlays/base/cluster.yaml:"), broken.stderr


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
        objects, warnings = split_warnings(proc.stdout)
        assert objects == render_objects(render.stdout)
        assert warnings == [line for line in proc.stderr.splitlines() if "warning[" in line]


def test_null_empty_and_unset_parameters_mean_none() -> None:
    outputs = set()
    for value in ("null", "", " ", None):
        env = {} if value is None else {"ARGOCD_APP_PARAMETERS": value}
        proc = run(APP, env)
        assert proc.returncode == 0, (value, proc.stderr)
        outputs.add(proc.stdout)
    assert len(outputs) == 1


# --- the environment as Argo CD sends it (issue 11, Argo 2) ------------------------------------------------

def _settings(env: dict[str, str]):
    """The settings of a request whose environment is ``env`` (as CmpGenerateRequest.from_environment reads it)."""
    from renderer.cmp import settings

    plugin_env = {k: v for k, v in env.items() if k.startswith("ARGOCD_ENV_")}
    return settings(env.get("ARGOCD_APP_PARAMETERS", ""), plugin_env, env.get("KUBE_VERSION", ""))


def test_kube_version_is_the_default_kubernetes_version() -> None:
    assert _settings({"KUBE_VERSION": "1.31.7"}).kubernetes_version == "1.31"
    assert _settings({"KUBE_VERSION": "v1.29.2-eks-4f4795d"}).kubernetes_version == "1.29"
    assert _settings({"KUBE_VERSION": ""}).kubernetes_version is None  # unknown cluster version: built-in default
    assert _settings({}).kubernetes_version is None


def test_kube_version_outside_the_bundled_range_uses_the_nearest_minor() -> None:
    from renderer.check.schemas.catalog import bundled_versions

    newest, oldest = bundled_versions()[-1].rsplit(".", 1)[0], bundled_versions()[0].rsplit(".", 1)[0]
    new = _settings({"KUBE_VERSION": "1.99.0"})
    assert new.kubernetes_version == newest
    assert [f.format() for f in new.notices] == [
        f"warning[CMP-KUBE-VERSION]: KUBE_VERSION 1.99.0 has no bundled schemas (bundled {oldest}-{newest}); "
        f"validating with the newest, {newest}"]
    assert _settings({"KUBE_VERSION": "1.10.3"}).kubernetes_version == oldest
    garbage = _settings({"KUBE_VERSION": "banana"})
    assert garbage.kubernetes_version is None and garbage.notices[0].code == "CMP-KUBE-VERSION"


def test_precedence_parameter_then_env_entry_then_kube_version() -> None:
    param = json.dumps([{"name": "kubernetes-version", "string": "1.30"}, {"name": "strict", "string": "false"}])
    env = {"ARGOCD_ENV_kubernetes-version": "1.28", "ARGOCD_ENV_strict": "true", "KUBE_VERSION": "1.33.4"}
    assert _settings({**env, "ARGOCD_APP_PARAMETERS": param})[1:3] == (False, "1.30")
    assert _settings(env)[1:3] == (True, "1.28")
    assert _settings({"KUBE_VERSION": "1.33.4"})[1:3] == (False, "1.33")
    # upper-case snake spelling; an empty entry (Argo CD >= 3.0 passes them) is unset
    assert _settings({"ARGOCD_ENV_KUBERNETES_VERSION": "1.27", "ARGOCD_ENV_STRICT": ""})[1:3] == (False, "1.27")


def test_bad_env_entries_are_refused() -> None:
    import pytest

    from renderer.errors import RenderError

    for env, message in [
        ({"ARGOCD_ENV_strict": "yes"}, "error[CMP-ENV]: plugin env strict must be \"true\" or \"false\", got 'yes'"),
        ({"ARGOCD_ENV_kubernetes-version": "1.2"}, "error[CMP-ENV]: plugin env kubernetes-version: no bundled"),
        ({"ARGOCD_ENV_strict": "true", "ARGOCD_ENV_STRICT": "false"},
         "error[CMP-ENV]: conflicting plugin env entries for strict: ARGOCD_ENV_STRICT='false', "
         "ARGOCD_ENV_strict='true'"),
    ]:
        with pytest.raises(RenderError) as exc:
            _settings(env)
        assert str(exc.value).startswith(message)


def test_env_entry_strict_fails_the_sync_with_errors() -> None:
    proc = run(APP, {"ARGOCD_ENV_strict": "true"})
    assert proc.returncode == 3 and proc.stdout == ""
    # the warning keeps its severity and says that strict fails the sync on it
    assert "warning[PLT-11]: cozystack.metallb is co-managed" in proc.stderr and "error[" not in proc.stderr
    assert all(line.endswith(" (fails: strict)") for line in proc.stderr.splitlines() if "warning[" in line)
    relaxed = run(APP, {"ARGOCD_ENV_strict": "true", "ARGOCD_APP_PARAMETERS": json.dumps(
        [{"name": "strict", "string": "false"}])})
    assert relaxed.returncode == 0 and "warning[PLT-11]" in relaxed.stderr


def test_kube_version_notice_on_stderr_and_render_goes_on() -> None:
    proc = run(APP, {"KUBE_VERSION": "1.99.1"})
    assert proc.returncode == 0
    objects, shown = split_warnings(proc.stdout)
    assert objects == split_warnings(run(APP).stdout)[0]  # the same objects; the notice is shown in Argo CD too
    assert shown[0].startswith("warning[CMP-KUBE-VERSION]: KUBE_VERSION 1.99.1")
    assert "warning[CMP-KUBE-VERSION]: KUBE_VERSION 1.99.1 has no bundled schemas" in proc.stderr


def test_kube_version_picks_the_schemas(tmp_path: Path) -> None:
    """A field only newer Kubernetes has, with a wrong type: refused with KUBE_VERSION 1.33, unknown (so
    accepted, as kubeconform without -strict does) with 1.25."""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(OVERLAYS, repo)
    (repo / ".git").mkdir()
    (repo / "extra" / "namespace.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: tenant-example}\n"
        "spec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      containers: [{name: c, image: x, resizePolicy: not-a-list}]\n")
    app = repo / "clusters" / "gpu-apt-01"
    new = run(app, {"KUBE_VERSION": "1.33.4"})
    old = run(app, {"KUBE_VERSION": "1.25.16"})
    assert old.returncode == 0, old.stderr
    assert new.returncode == 3 and "error[SCHEMA]" in new.stderr and "resizePolicy" in new.stderr


# --- paths users can read (issue 11, Argo 3) ---------------------------------------------------------------

def test_messages_name_paths_relative_to_the_repository_root(tmp_path: Path) -> None:
    """In the cmp-server the working directory is <tmp>/_cmp_server/<id>/<source path>: a base layer's
    error must read overlays/base/cluster.yaml:L:C, not the server's temporary path."""
    import shutil

    server_tmp = tmp_path / "_cmp_server" / "6f1c2a"
    shutil.copytree(OVERLAYS, server_tmp / "overlays")
    base = server_tmp / "overlays" / "base" / "cluster.yaml"
    base.write_text(base.read_text() + "platform: {variant: 7}\n")
    app = server_tmp / "overlays" / "clusters" / "gpu-apt-01"
    proc = run(app, _cmp_server_env(app, "overlays/clusters/gpu-apt-01"))
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr.startswith("overlays/base/cluster.yaml:"), proc.stderr
    assert str(tmp_path) not in proc.stderr and "_cmp_server" not in proc.stderr
    # with the base fixed, the warning of a sync that works names the cluster file from the root too
    shutil.copy(OVERLAYS / "base" / "cluster.yaml", base)
    clean = run(app, _cmp_server_env(app, "overlays/clusters/gpu-apt-01"))
    assert clean.returncode == 0 and "overlays/clusters/gpu-apt-01/cluster.yaml:20:3: warning[PLT-11]" in clean.stderr


def test_local_messages_are_relative_to_the_working_directory() -> None:
    proc = subprocess.run([sys.executable, "-m", "renderer", "render", "."], cwd=APP, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0 and proc.stderr.startswith("cluster.yaml:20:3: warning[PLT-11]"), proc.stderr


def test_chart_parameter_and_env_entry_pick_the_judge(tmp_path: Path) -> None:
    """Issue 17 item 3: the chart mode is settable for cmp generate; a helm that is not one is PLT-HELM,
    never a chart failure blamed on the overlay; a bad value is CMP-PARAMS / CMP-ENV."""
    not_helm = tmp_path / "helm"
    not_helm.write_text("#!/bin/sh\necho nope\n")
    not_helm.chmod(0o755)
    path = f"{tmp_path}:{os.environ.get('PATH', '')}"
    model = run(APP)
    assert model.returncode == 0
    for env in ({"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "chart", "string": "helm"}])},
                {"ARGOCD_ENV_chart": "helm"}):
        proc = run(APP, {**env, "PATH": path})
        assert (proc.returncode, proc.stdout) == (3, ""), proc.stderr
        assert "error[PLT-HELM]" in proc.stderr and "is not helm" in proc.stderr
    proc = run(APP, {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "chart", "string": "maybe"}])})
    assert proc.returncode == 3 and "error[CMP-PARAMS]: parameter chart must be one of model, helm, auto" in proc.stderr
    proc = run(APP, {"ARGOCD_ENV_chart": "maybe"})
    assert proc.returncode == 3 and "error[CMP-ENV]" in proc.stderr
