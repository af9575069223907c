"""docs/argocd/install/ builds with the real `kubectl kustomize` against a stub Argo CD install and yields
the plugin ConfigMap, the hardened sidecar in argocd-repo-server and the Package health check."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO

# argocd-cmp-server stays the main process; the resident renderer starts beside it (README "Argo CD").
SIDECAR_COMMAND = ('cozy-render daemon serve --socket "$COZY_RENDER_DAEMON_SOCKET" & '
                   'exec /var/run/argocd/argocd-cmp-server')

INSTALL = REPO / "docs" / "argocd" / "install"
STUB = Path(__file__).parent / "argocd_stub"
KUBECTL = shutil.which("kubectl")
HEALTH_KEY = "resource.customizations.health.cozystack.io_Package"


def kustomization() -> dict[str, Any]:
    return YAML(typ="safe").load((INSTALL / "kustomization.yaml").read_text())


def test_the_overlay_names_one_pinned_argo_cd_install() -> None:
    (resource,) = kustomization()["resources"]
    assert re.fullmatch(r"https://raw\.githubusercontent\.com/argoproj/argo-cd/v\d+\.\d+\.\d+/manifests/install\.yaml",
                        resource), resource


def build(work: Path, namespace: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """The overlay built by the real kubectl kustomize, the upstream install (network) replaced by the
    vendored stub, and Argo CD's namespace changed where README step 2 says to, if asked."""
    shutil.copytree(INSTALL, work)
    for stub in STUB.glob("*.yaml"):
        shutil.copy(stub, work / stub.name)
    text = (work / "kustomization.yaml").read_text()
    (resource,) = kustomization()["resources"]
    (work / "kustomization.yaml").write_text(
        text.replace(f"  - {resource}\n", "".join(f"  - {p.name}\n" for p in sorted(STUB.glob("*.yaml")))))
    if namespace is not None:
        transformer = (work / "namespace.yaml").read_text()
        assert "  namespace: argocd\n" in transformer
        (work / "namespace.yaml").write_text(transformer.replace("  namespace: argocd\n", f"  namespace: {namespace}\n"))
    proc = subprocess.run([KUBECTL or "kubectl", "kustomize", str(work)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in YAML(typ="safe").load_all(proc.stdout) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH: the real `kubectl kustomize` build is skipped")
    return build(tmp_path_factory.mktemp("install") / "install")


def test_a_namespace_change_rewrites_every_subject(tmp_path: Path) -> None:
    """Issue 20 item 2: kustomize's `namespace:` field leaves ClusterRoleBinding subjects in argocd."""
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH: the real `kubectl kustomize` build is skipped")
    objects = build(tmp_path / "install", namespace="gitops")
    subjects = [s for (kind, _), d in objects.items() if kind in ("ClusterRoleBinding", "RoleBinding")
                for s in d.get("subjects") or [] if s["kind"] == "ServiceAccount"]
    assert len(subjects) == 3 and all(s["namespace"] == "gitops" for s in subjects), subjects
    cluster_scoped = {"ClusterRoleBinding", "ClusterRole"}
    assert all(d["metadata"].get("namespace") == "gitops" for (kind, _), d in objects.items()
               if kind not in cluster_scoped)
    assert "namespace" not in kustomization()  # the field that would leave subjects behind


def test_the_image_is_pinned_by_digest_with_the_version_tag(built: dict) -> None:
    spec = built[("Deployment", "argocd-repo-server")]["spec"]["template"]["spec"]
    (sidecar,) = [c for c in spec["containers"] if c["name"] == "cozy-render"]
    match = re.fullmatch(r"registry\.example\.com/cozy-render:([^@]+)@sha256:[0-9a-f]{64}", sidecar["image"])
    assert match and match.group(1) == metadata.version("cozy-render"), sidecar["image"]
    assert sidecar["imagePullPolicy"] == "IfNotPresent"


def test_apply_commands_force_conflicts() -> None:
    """Server-side apply over an existing Argo CD install needs --force-conflicts (Argo CD's getting-started)."""
    command = "kubectl kustomize docs/argocd/install/ | kubectl apply --server-side --force-conflicts -f -"
    assert command in (INSTALL / "kustomization.yaml").read_text()
    readme = (REPO / "README.md").read_text()
    assert command in readme
    assert "--server-side -f" not in readme.replace("--server-side --force-conflicts -f", "")


def test_plugin_version_is_the_package_version_everywhere() -> None:
    """Issue 20 item 3: the version reaches Argo CD's manifest cache key through the plugin name
    (<metadata.name>-<spec.version>, cmpserver/plugin/config.go Address) the Applications use."""
    version = metadata.version("cozy-render")
    from renderer import __version__

    assert version == __version__
    plugin = YAML(typ="safe").load((INSTALL / "plugin.yaml").read_text())
    assert plugin["spec"]["version"] == version
    appset = YAML(typ="safe").load((REPO / "docs" / "argocd" / "applicationset.yaml").read_text())
    assert appset["spec"]["template"]["spec"]["source"]["plugin"]["name"] == f"{plugin['metadata']['name']}-{version}"
    (image,) = kustomization()["images"]
    assert image["newTag"] == version
    helm_values = YAML(typ="safe").load((REPO / "docs" / "argocd" / "helm" / "values.yaml").read_text())
    assert helm_values["configs"]["cmp"]["plugins"]["cozy-render"]["version"] == version
    assert f"cozy-render:{version}@sha256:" in helm_values["repoServer"]["extraContainers"][0]["image"]


def _plugin_configmap(built: dict) -> dict[str, Any]:
    (cm,) = [d for (kind, name), d in built.items() if kind == "ConfigMap" and name.startswith("cozy-render-plugin")]
    return cm


def test_plugin_configmap_holds_plugin_yaml(built: dict) -> None:
    cm = _plugin_configmap(built)
    assert re.fullmatch(r"cozy-render-plugin-[a-z0-9]{10}", cm["metadata"]["name"])  # content hash: rollout on change
    assert cm["data"] == {"plugin.yaml": (INSTALL / "plugin.yaml").read_text()}
    assert all(d["metadata"].get("namespace") == "argocd" for (kind, _), d in built.items()
               if kind != "ClusterRoleBinding")


def test_repo_server_gets_the_hardened_sidecar(built: dict) -> None:
    template = built[("Deployment", "argocd-repo-server")]["spec"]["template"]
    spec = template["spec"]
    containers = {c["name"]: c for c in spec["containers"]}
    assert set(containers) == {"argocd-repo-server", "cozy-render"}  # Argo CD's own container is kept
    # the patch puts the sidecar first, which would make it kubectl's default container
    assert template["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] == "argocd-repo-server"
    sidecar = containers["cozy-render"]
    assert sidecar["command"] == ["/bin/sh", "-c", SIDECAR_COMMAND]  # the resident renderer beside it
    assert sidecar["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 999, "runAsGroup": 999, "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"}}
    # ...and everything Argo CD's own container has in its securityContext, the sidecar has too
    own = containers["argocd-repo-server"]["securityContext"]
    assert {k: sidecar["securityContext"][k] for k in own} == own
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in sidecar["volumeMounts"]}
    assert set(volumes) >= {"tmp", "var-files", "plugins", "cozy-render-plugin", "cozy-render-tmp"}
    assert all(m["name"] in volumes for m in sidecar["volumeMounts"])
    assert mounts["/home/argocd/cmp-server/config/plugin.yaml"] == {
        "name": "cozy-render-plugin", "mountPath": "/home/argocd/cmp-server/config/plugin.yaml",
        "subPath": "plugin.yaml"}
    assert volumes["cozy-render-plugin"]["configMap"]["name"] == _plugin_configmap(built)["metadata"]["name"]
    assert mounts["/tmp"]["name"] == "cozy-render-tmp" != "tmp"  # never the repo-server's /tmp
    assert {mounts["/var/run/argocd"]["name"], mounts["/home/argocd/cmp-server/plugins"]["name"]} == \
        {"var-files", "plugins"}
    env = {e["name"]: e["value"] for e in sidecar["env"]}
    assert env["HOME"].startswith("/tmp") and env["COZY_RENDER_CACHE_DIR"].startswith("/tmp/")
    assert [c["name"] for c in spec["initContainers"]] == ["copyutil"]


def test_argocd_cm_gets_the_package_health_check(built: dict) -> None:
    data = built[("ConfigMap", "argocd-cm")]["data"]
    assert data["timeout.reconciliation"] == "180s"  # the user's settings are kept
    lua = data[HEALTH_KEY]
    assert "PackageSourceNotFound" in lua and lua.rstrip().endswith("return hs")  # run in test_argocd_health.py


def test_readme_shows_the_same_health_check() -> None:
    lua = YAML(typ="safe").load((INSTALL / "argocd-cm-health.yaml").read_text())["data"][HEALTH_KEY]
    readme = (REPO / "README.md").read_text()
    block = readme.split(f"{HEALTH_KEY}: |\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.strip()]
    indent = len(lines[0]) - len(lines[0].lstrip())
    assert "\n".join(line[indent:] for line in lines) == lua.rstrip("\n")
