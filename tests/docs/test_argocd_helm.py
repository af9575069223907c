"""The Argo CD Helm chart path: the real `helm template` of the vendored upstream argo-cd chart
(tests/docs/data/charts/, source and licence in its README) with docs/argocd/helm/values.yaml yields the
repo-server with the cozy-render sidecar, the plugin ConfigMap and the health check, the same ones the
kustomize path (docs/argocd/install/) builds."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO

# argocd-cmp-server stays the main process; the resident renderer starts beside it (README "Argo CD").
SIDECAR_COMMAND = ('cozy-render daemon serve --socket "$COZY_RENDER_DAEMON_SOCKET" & '
                   'exec /var/run/argocd/argocd-cmp-server')

CHART = Path(__file__).parent / "data" / "charts" / "argo-cd-10.1.1.tgz"
VALUES = REPO / "docs" / "argocd" / "helm" / "values.yaml"
INSTALL = REPO / "docs" / "argocd" / "install"
HEALTH_KEY = "resource.customizations.health.cozystack.io_Package"
HELM = shutil.which("helm")


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


@pytest.fixture(scope="module", params=["argocd", "gitops"])
def rendered(request: pytest.FixtureRequest) -> tuple[str, dict[tuple[str, str], dict[str, Any]]]:
    if HELM is None:
        pytest.skip("helm is not on PATH: the real `helm template` of the argo-cd chart is skipped")
    namespace = request.param
    proc = subprocess.run([HELM, "template", "argocd", str(CHART), "--namespace", namespace, "-f", str(VALUES)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in YAML(typ="safe").load_all(proc.stdout) if d]
    return namespace, {(d["kind"], d["metadata"]["name"]): d for d in docs}


def _sidecar(objects: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    spec = objects[("Deployment", "argocd-repo-server")]["spec"]["template"]["spec"]
    containers = {c["name"]: c for c in spec["containers"]}
    assert set(containers) == {"repo-server", "cozy-render"}
    return containers["cozy-render"], spec


def test_repo_server_gets_the_sidecar_with_its_volumes(rendered) -> None:
    _, objects = rendered
    sidecar, spec = _sidecar(objects)
    assert sidecar["command"] == ["/bin/sh", "-c", SIDECAR_COMMAND]  # the resident renderer beside it
    from renderer import __version__

    assert re.fullmatch(rf"registry\.example\.com/cozy-render:{re.escape(__version__)}@sha256:[0-9a-f]{{64}}",
                        sidecar["image"])
    assert sidecar["imagePullPolicy"] == "IfNotPresent"
    assert sidecar["securityContext"]["runAsUser"] == 999 and sidecar["securityContext"]["readOnlyRootFilesystem"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in sidecar["volumeMounts"]}
    assert all(m["name"] in volumes for m in sidecar["volumeMounts"])
    assert mounts["/home/argocd/cmp-server/config/plugin.yaml"]["subPath"] == "cozy-render.yaml"
    assert volumes["argocd-cmp-cm"]["configMap"]["name"] == "argocd-cmp-cm"
    assert mounts["/tmp"]["name"] == "cozy-render-tmp" and "emptyDir" in volumes["cozy-render-tmp"]
    assert {mounts["/var/run/argocd"]["name"], mounts["/home/argocd/cmp-server/plugins"]["name"]} == \
        {"var-files", "plugins"}
    # the chart's copyutil puts argocd-cmp-server where the sidecar's command expects it
    (copyutil,) = [c for c in spec["initContainers"] if c["name"] == "copyutil"]
    assert "/var/run/argocd/argocd-cmp-server" in " ".join(copyutil["args"])


def test_the_sidecar_is_the_kustomize_one(rendered) -> None:
    """One sidecar, two install paths: only the plugin ConfigMap's volume differs."""
    _, objects = rendered
    sidecar, _ = _sidecar(objects)
    patch = load(INSTALL / "repo-server-sidecar.yaml")["spec"]["template"]["spec"]["containers"][0]
    images = {i["name"]: i for i in load(INSTALL / "kustomization.yaml")["images"]}
    image = images[patch["image"]]
    patch = {**patch, "image": f"{patch['image']}:{image['newTag']}@{image['digest']}"}
    differ = "/home/argocd/cmp-server/config/plugin.yaml"
    strip = lambda c: {**c, "volumeMounts": [m for m in c["volumeMounts"] if m["mountPath"] != differ]}  # noqa: E731
    assert strip(sidecar) == strip(patch)


def test_plugin_configmap_holds_plugin_yaml(rendered) -> None:
    namespace, objects = rendered
    cm = objects[("ConfigMap", "argocd-cmp-cm")]
    assert cm["metadata"]["namespace"] == namespace
    plugin = YAML(typ="safe").load(cm["data"]["cozy-render.yaml"])
    assert plugin == load(INSTALL / "plugin.yaml")
    # the chart rolls the repo-server out when the plugin changes
    annotations = objects[("Deployment", "argocd-repo-server")]["spec"]["template"]["metadata"]["annotations"]
    assert "checksum/cmp-cm" in annotations


def test_argocd_cm_gets_the_health_check(rendered) -> None:
    _, objects = rendered
    lua = objects[("ConfigMap", "argocd-cm")]["data"][HEALTH_KEY]
    assert lua == load(INSTALL / "argocd-cm-health.yaml")["data"][HEALTH_KEY]


def test_a_namespace_change_moves_every_subject(rendered) -> None:
    namespace, objects = rendered
    subjects = [s for (kind, _), d in objects.items() if kind in ("ClusterRoleBinding", "RoleBinding")
                for s in d.get("subjects") or [] if s["kind"] == "ServiceAccount"]
    assert subjects and all(s["namespace"] == namespace for s in subjects)


def test_the_vendored_chart_is_noted() -> None:
    note = (CHART.parent / "README.md").read_text()
    assert CHART.name in note and "Apache-2.0" in note and "af0a9310" in note
    assert (CHART.parent / "LICENSE-argo-helm").read_text().lstrip().startswith("Apache License")
    assert "--version 10.1.1" in VALUES.read_text()  # the values name the chart version they are tested with
