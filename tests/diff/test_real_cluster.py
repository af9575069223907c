"""Every sample cluster against what a real cluster holds (issue 18 acceptance): server defaults,
managedFields of several managers, Helm-owned co-managed Packages, unlabelled platform Packages,
operator status. Live (the real kubernetes client over HTTP), --server-side, and YAML and JSON
snapshots of the same state: all exit 0; each drift class gives its status and exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diff.helpers import PROJECT, cozy, overlays_repo, real_cluster, render_objects, write_list
from tests.kubefake import KubeFake

pytestmark = pytest.mark.loopback

SAMPLES = sorted(p.name for p in (PROJECT / "overlays" / "clusters").iterdir() if (p / "cluster.yaml").exists())
MODES = ("live", "server-side", "yaml", "json")


def _run(mode: str, cluster_dir: Path, fake: KubeFake, tmp_path: Path) -> object:
    name = cluster_dir.name
    if mode in ("yaml", "json"):
        snapshot = write_list(tmp_path / f"snap.{mode}", list(fake.objects.values()), mode)
        return cozy("diff", cluster_dir, "--snapshot", snapshot)
    kc = fake.kubeconfig(tmp_path / "kc", [name])
    return cozy("diff", cluster_dir, "--kubeconfig", kc, *(["--server-side"] if mode == "server-side" else []))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cluster", SAMPLES)
def test_every_sample_cluster_is_clean_against_a_realistic_cluster(kube_fake: KubeFake, tmp_path: Path,
                                                                   cluster: str, mode: str) -> None:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / cluster
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    result = _run(mode, cluster_dir, kube_fake, tmp_path)
    assert result.code == 0, result  # type: ignore[attr-defined]
    assert "0 to create, 0 to change" in result.stdout  # type: ignore[attr-defined]


DAEMONSET = ("apps", "DaemonSet", "cozy-gpu-operator", "nvidia-driver-compat")


@pytest.mark.parametrize("mode", MODES)
def test_a_hand_edit_shows_exactly_that_field(kube_fake: KubeFake, tmp_path: Path, mode: str) -> None:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / "gpu-talos-01"
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    live = kube_fake.objects[DAEMONSET]
    live["spec"]["template"]["spec"]["volumes"][0]["hostPath"]["type"] = "Directory"
    result = _run(mode, cluster_dir, kube_fake, tmp_path)
    assert result.code == 1, result  # type: ignore[attr-defined]
    out = result.stdout  # type: ignore[attr-defined]
    assert "to change             DaemonSet cozy-gpu-operator/nvidia-driver-compat" in out
    changed = [line for line in out.splitlines() if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))]
    assert changed == ["-          type: Directory", "+          type: ''"], out


@pytest.mark.parametrize("mode", MODES)
def test_a_deleted_object_is_to_create_and_an_orphan_is_orphaned(kube_fake: KubeFake, tmp_path: Path,
                                                                   mode: str) -> None:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / "gpu-talos-01"
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    del kube_fake.objects[DAEMONSET]
    result = _run(mode, cluster_dir, kube_fake, tmp_path)
    assert result.code == 1, result  # type: ignore[attr-defined]
    assert "to create             DaemonSet cozy-gpu-operator/nvidia-driver-compat" in result.stdout  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("package", ["cozystack.metallb", "cozystack.networking"])
def test_a_missing_co_managed_package_is_never_exit_0(kube_fake: KubeFake, tmp_path: Path, mode: str,
                                                      package: str) -> None:
    """Issue 18 item 3: the patch target is absent; syncing would create a partial object. PLT-11 is
    an error (exit 3) or a warning (then the difference still exits 1), never exit 0."""
    cluster_dir = overlays_repo(tmp_path) / "clusters" / "gpu-apt-01"
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    del kube_fake.objects[("cozystack.io", "Package", "", package)]
    result = _run(mode, cluster_dir, kube_fake, tmp_path)
    assert result.code in (1, 3), result  # type: ignore[attr-defined]
    assert f"patch target missing  Package {package}" in result.stdout  # type: ignore[attr-defined]
    assert "[PLT-11]" in result.stderr  # type: ignore[attr-defined]
