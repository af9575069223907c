"""A real Git repository with a base commit and a change commit (issue 21's acceptance case)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

BASE = """\
apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
vars: {apiPort: "443"}
host: {os: apt}
platform:
  variant: isp-full-generic
  values:
    publishing:
      host: "{{ vars.domain }}"
      apiServerEndpoint: "https://api.{{ vars.domain }}:{{ vars.apiPort }}"
      exposedServices: [dashboard, api]
    networking: {podCIDR: 10.244.0.0/16, podGateway: 10.244.0.1, serviceCIDR: 10.96.0.0/16, joinCIDR: 100.64.0.0/16}
"""
TALOS = """\
apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
inherits: [cluster.yaml]
host: {os: talos, talosVersion: v1.13.6}
platform: {variant: isp-full}
"""
SECRET = """\
apiVersion: v1
kind: Secret
metadata: {name: registry-auth, namespace: tenant-example}
stringData:
  password: VALUE
  user: admin
"""


def cluster(name: str, *lines: str, inherits: str = "../../base/cluster.yaml") -> str:
    head = ["apiVersion: render.cozystack.io/v1alpha1", "kind: ClusterOverlay", f"metadata: {{name: {name}}}"]
    if inherits:
        head.append(f"inherits: [{inherits}]")
    head.append(f"vars: {{domain: {name}.example.org}}")
    return "\n".join([*head, *lines]) + "\n"


STANDALONE = """\
apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
metadata: {name: standalone}
host: {os: apt}
platform:
  variant: isp-full-generic
  values:
    publishing: {host: standalone.example.org, apiServerEndpoint: "https://api.standalone.example.org:443"}
"""

BASE_FILES = {
    "README.md": "# fleet\n",
    "overlays/base/cluster.yaml": BASE,
    "overlays/base/talos.yaml": TALOS,
    "overlays/extra/secret.yaml": SECRET.replace("VALUE", "base-secret-Zq81"),
    "overlays/clusters/apt-a/cluster.yaml": cluster("apt-a"),
    "overlays/clusters/apt-secret/cluster.yaml": cluster("apt-secret", "manifests: [../../extra/secret.yaml]"),
    "overlays/clusters/apt-gpu/cluster.yaml": cluster("apt-gpu", "gpu: {variant: container}"),
    "overlays/clusters/talos-gpu/cluster.yaml": cluster("talos-gpu", "gpu: {variant: container}",
                                                       inherits="../../base/talos.yaml"),
    "overlays/clusters/apt-bundles/cluster.yaml": cluster("apt-bundles"),
    "overlays/clusters/old/cluster.yaml": cluster("old"),
    "overlays/clusters/standalone/cluster.yaml": STANDALONE,
}

# The change: a base-layer edit (every cluster inheriting base/cluster.yaml), a new cluster, a removed
# cluster, a GPU variant change (container -> the default passthrough route), a Secret value change, a
# value that makes the chart emit another Package set (metallb disabled), a new rule error (GPU-05).
CHANGE_FILES = {
    "overlays/base/cluster.yaml": BASE.replace("exposedServices: [dashboard, api]",
                                               "exposedServices: [dashboard, api, vm-exportproxy]"),
    "overlays/extra/secret.yaml": SECRET.replace("VALUE", "head-secret-Wx42"),
    "overlays/clusters/apt-gpu/cluster.yaml": cluster("apt-gpu", "gpu: {variant: default}"),
    "overlays/clusters/talos-gpu/cluster.yaml": cluster("talos-gpu", "gpu: {variant: vgpu}",
                                                       inherits="../../base/talos.yaml"),
    "overlays/clusters/apt-bundles/cluster.yaml": cluster(
        "apt-bundles", "platform:", "  values:", "    bundles: {disabledPackages: [cozystack.metallb]}"),
    # Not "old" under a new name (that would be a rename: renderer.preview.review._renames).
    "overlays/clusters/new/cluster.yaml": "# a new cluster\n" + cluster("new"),
}
REMOVED = ["overlays/clusters/old/cluster.yaml"]
SECRET_VALUES = ("base-secret-Zq81", "head-secret-Wx42")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def fleet_repo(tmp_path: Path) -> Path:
    """Two commits: ``base`` (tag) and ``change`` (tag, HEAD of main); the working tree is clean."""
    repo = tmp_path / "fleet"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, BASE_FILES)
    commit_all(repo, "base")
    git(repo, "tag", "base")
    write(repo, CHANGE_FILES)
    for rel in REMOVED:
        (repo / rel).unlink()
    commit_all(repo, "change")
    git(repo, "tag", "change")
    return repo


def without_helm(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH with no helm on it (the built-in model predicts the platform's reaction)."""
    import shutil

    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "helm").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(dirs))
    assert shutil.which("helm") is None
