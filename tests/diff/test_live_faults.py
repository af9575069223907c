"""A live diff against hostile or faulty API servers (issue 18 items 4, 7, 8; issue 25 items 4, 9):
orphans of any kind, the wrong context, faults named exactly, bounded responses, validated lists,
no helper process or temporary folder left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.diff.helpers import PROJECT, cozy, overlays_repo, real_cluster, render_objects
from tests.kubefake import KubeFake, argo_synced, kubeconfig

pytestmark = pytest.mark.loopback

CLUSTER = "gpu-apt-01"


@pytest.fixture
def cluster(kube_fake: KubeFake, tmp_path: Path) -> tuple[KubeFake, Path, Path]:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / CLUSTER
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    return kube_fake, cluster_dir, kube_fake.kubeconfig(tmp_path / "kc", [CLUSTER])


def _labelled(obj: dict, cluster: str = CLUSTER) -> dict:
    obj["metadata"].setdefault("labels", {})["render.cozystack.io/cluster"] = cluster
    return obj


def test_orphans_of_kinds_the_cluster_does_not_render(cluster: tuple[KubeFake, Path, Path]) -> None:
    """An orphaned Secret (the cluster renders none) and an orphaned Namespace are found live."""
    fake, cluster_dir, kc = cluster
    assert not any(o["kind"] == "Secret" for o in render_objects(cluster_dir))
    fake.add(argo_synced(_labelled({"apiVersion": "v1", "kind": "Secret",
                                    "metadata": {"name": "old-token", "namespace": "tenant-example"},
                                    "data": {"token": "c2VjcmV0"}})),
             argo_synced(_labelled({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-gone"}})))
    result = cozy("diff", cluster_dir, "--kubeconfig", kc)
    assert result.code == 1, result
    assert "orphaned              Secret tenant-example/old-token" in result.stdout
    assert "orphaned              Namespace tenant-gone" in result.stdout
    assert "c2VjcmV0" not in result.stdout  # masked, as every Secret value


def test_the_wrong_context_is_refused_naming_both_clusters(cluster: tuple[KubeFake, Path, Path],
                                                           tmp_path: Path) -> None:
    """The current context is vlan-apt-01's cluster: diffing gpu-apt-01 there is DIFF-CONTEXT."""
    fake, _gpu, _kc = cluster
    vlan = overlays_repo(tmp_path / "other") / "clusters" / "vlan-apt-01"
    fake.objects.clear()
    fake.add(*real_cluster(render_objects(vlan)))
    gpu = overlays_repo(tmp_path / "mine") / "clusters" / CLUSTER
    kc = fake.kubeconfig(tmp_path / "kc2", ["vlan-apt-01"])
    result = cozy("diff", gpu, "--kubeconfig", kc)
    assert result.code == 3, result
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error[DIFF-CONTEXT]: {CLUSTER}: context vlan-apt-01 ({fake.url}) holds objects of "
                           "cluster vlan-apt-01 ")


def test_the_context_line_names_the_context_every_time(cluster: tuple[KubeFake, Path, Path]) -> None:
    fake, cluster_dir, kc = cluster
    for args in ([], ["--server-side"], ["-o", "json"]):
        result = cozy("diff", cluster_dir, "--kubeconfig", kc, *args)
        assert result.code == 0, result
        assert result.stderr == f"diff: {CLUSTER}: compared with context {CLUSTER} ({fake.url})\n"


def test_a_connection_reset_during_discovery_is_named(cluster: tuple[KubeFake, Path, Path]) -> None:
    fake, cluster_dir, kc = cluster
    fake.reset(r"GET /apis$")
    result = cozy("diff", cluster_dir, "--kubeconfig", kc)
    assert result.code == 3, result
    (line,) = result.stderr.splitlines()
    assert line.startswith("error[DIFF-LIVE]: API discovery: connection reset (")


@pytest.mark.parametrize("where", [r"GET /apis$", r"GET /api/v1$", r"GET /apis/cozystack.io/v1alpha1/packages$",
                                   r"PATCH /apis/cozystack.io/v1alpha1/packages/"])
@pytest.mark.parametrize("fault", ["endless", "huge_length", "gzip_bomb", "oversize"])
def test_every_response_is_bounded(cluster: tuple[KubeFake, Path, Path], where: str, fault: str) -> None:
    fake, cluster_dir, kc = cluster
    getattr(fake, fault)(where)
    result = cozy("diff", cluster_dir, "--kubeconfig", kc, "--server-side", "--timeout", "20")
    assert result.code == 3, result
    (line,) = result.stderr.splitlines()
    assert line.startswith("error[DIFF-LIVE]: "), line
    assert ("-byte limit" in line) or ("truncated response" in line), line


@pytest.mark.parametrize("how, words", [("endless-continue", "an endless continue"),
                                        ("nameless", "not a Kubernetes object with a metadata.name"),
                                        ("list-name", "not a Kubernetes object with a metadata.name"),
                                        ("duplicates", "twice")])
def test_malformed_lists_are_refused(cluster: tuple[KubeFake, Path, Path], how: str, words: str) -> None:
    fake, cluster_dir, kc = cluster
    fake.bad_list(r"GET /apis/cozystack.io/v1alpha1/packages$", how)
    result = cozy("diff", cluster_dir, "--kubeconfig", kc)
    assert result.code == 3, result
    (line,) = result.stderr.splitlines()
    assert line.startswith("error[DIFF-LIVE]: list Package -l render.cozystack.io/cluster: malformed "), line
    assert words in line


def test_an_unavailable_aggregated_api_is_a_warning_not_a_blind_spot(cluster: tuple[KubeFake, Path, Path]) -> None:
    """A group version the server lists but cannot serve (503, as a metrics API that is down): the
    rendered objects are still compared; DIFF-ORPHANS names what was not searched."""
    fake, cluster_dir, kc = cluster
    fake.fail(r"GET /apis/apps/v1$", 503)
    result = cozy("diff", cluster_dir, "--kubeconfig", kc)
    assert result.code == 0, result
    assert "warning[DIFF-ORPHANS]: gpu-apt-01: orphans not searched: apps/v1: " in result.stderr


def _subprocess_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "COZY_RENDER"))}
    env["PYTHONPATH"] = str(PROJECT)
    env["TMPDIR"] = str(tmp)
    return env


def test_one_deadline_no_temporary_folder_left(cluster: tuple[KubeFake, Path, Path], tmp_path: Path) -> None:
    """--timeout 2 against a 6 s discovery delay: DIFF-TIMEOUT, and nothing left in TMPDIR (the
    elapsed time is measured in bench/bench_diff.py, not asserted here)."""
    fake, cluster_dir, kc = cluster
    fake.slow(r"GET /apis$", 6)
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    done = subprocess.run([sys.executable, "-m", "renderer", "diff", str(cluster_dir), "--kubeconfig", str(kc),
                           "--timeout", "2"], capture_output=True, text=True, env=_subprocess_env(scratch), timeout=60)
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("error[DIFF-TIMEOUT]: "), done.stderr
    assert list(scratch.iterdir()) == []


def test_a_hung_exec_plugin_is_killed_at_the_deadline(cluster: tuple[KubeFake, Path, Path], tmp_path: Path) -> None:
    """A kubeconfig exec plugin runs as kubectl runs it; one that hangs is killed when --timeout passes."""
    fake, cluster_dir, _kc = cluster
    pid_file = tmp_path / "plugin.pid"
    plugin = tmp_path / "plugin.sh"
    plugin.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 300\n")
    plugin.chmod(0o755)
    kc = kubeconfig(tmp_path / "kc-exec", {CLUSTER: fake})
    text = kc.read_text().replace('"user": {}', '"user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", '
                                  f'"command": "{plugin}", "interactiveMode": "Never"}}}}')
    kc.write_text(text)
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    done = subprocess.run([sys.executable, "-m", "renderer", "diff", str(cluster_dir), "--kubeconfig", str(kc),
                           "--timeout", "3"], capture_output=True, text=True, env=_subprocess_env(scratch), timeout=60)
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("error[DIFF-TIMEOUT]: "), done.stderr
    assert pid_file.exists(), "the exec plugin never ran"
    pid = int(pid_file.read_text())
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        pytest.fail("the exec plugin outlived the diff")
