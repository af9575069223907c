"""diff against an API server: the real kubernetes client, over real HTTP, against tests/kubefake.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.diff.helpers import case_repo, cozy, live_copy, overlays_repo, render_objects
from tests.kubefake import KubeFake, kubeconfig, realistic

pytestmark = pytest.mark.loopback  # talks to tests/kubefake.py on 127.0.0.1

CLUSTER = "vlan-apt-01"


@pytest.fixture
def vlan(tmp_path: Path) -> Path:
    return overlays_repo(tmp_path) / "clusters" / CLUSTER


@pytest.fixture
def synced(kube_fake: KubeFake, vlan: Path, tmp_path: Path) -> tuple[KubeFake, Path, Path]:
    kube_fake.add(*live_copy(render_objects(vlan)))
    return kube_fake, vlan, kube_fake.kubeconfig(tmp_path / "kubeconfig", [CLUSTER])


def unlabel(fake: KubeFake, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
    """Take our cluster label off a live object: diff then reads it by name (as a patch target before
    its first apply), so a fault injected on that GET is hit."""
    meta: dict = {"name": name, **({"namespace": namespace} if namespace else {})}
    obj = fake.get({"apiVersion": api_version, "kind": kind, "metadata": meta})
    assert obj is not None
    del obj["metadata"]["labels"]["render.cozystack.io/cluster"]


NAD = ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
PLATFORM = ("cozystack.io/v1alpha1", "Package", "cozystack.cozystack-platform")


def test_synced_cluster_shows_no_differences(synced: tuple[KubeFake, Path, Path]) -> None:
    _fake, vlan, kc = synced
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 0, result
    assert "vlan-apt-01: 0 to create, 0 to change, 4 unchanged, 0 orphaned" in result.stdout


def test_reads_one_labelled_list_per_kind_and_gets_only_what_the_lists_lack(
        synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    unlabelled = fake.get({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                           "metadata": {"name": "vlan200", "namespace": "tenant-prod"}})
    assert unlabelled is not None
    del unlabelled["metadata"]["labels"]["render.cozystack.io/cluster"]
    assert cozy("diff", vlan, "--kubeconfig", kc).code == 1  # the label is missing live: a change
    from tests.kubefake import KINDS

    discovery = {"/api", "/apis", "/api/v1"} | {f"/apis/{k.group}/{k.version}" for k in KINDS if k.group}
    reads = [(m, p, q.get("labelSelector", [None])[0]) for m, p, q in fake.requests if p not in discovery]
    assert all(m == "GET" for m, _, _ in reads)
    assert [p for _, p, s in reads if s is None] == [
        "/apis/k8s.cni.cncf.io/v1/namespaces/tenant-prod/network-attachment-definitions/vlan200"]
    # Orphans of any kind (issue 18 item 4): one list of every listable kind the server serves.
    lists = sorted(p for _, p, s in reads if s is not None)
    assert lists == sorted(("/api/v1/" if not k.group else f"/apis/{k.group}/{k.version}/") + k.plural for k in KINDS)
    assert {s for _, _, s in reads if s is not None} == {"render.cozystack.io/cluster"}
    assert sorted(p for m, p, _ in fake.requests if p in discovery) == sorted(discovery)  # each asked once


def test_change_and_orphan_from_the_cluster(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text().split("  - {name: vlan200")[0])
    stale = fake.get({"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                      "metadata": {"name": "cozystack.cozystack-platform"}})
    assert stale is not None
    stale["spec"]["variant"] = "isp-full"
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 1, result
    assert "-  variant: isp-full\n+  variant: isp-full-generic" in result.stdout
    assert "orphaned              NetworkAttachmentDefinition tenant-prod/vlan200" in result.stdout
    assert "0 to create, 1 to change, 2 unchanged, 1 orphaned" in result.stdout


def test_patch_against_the_platform_object_and_plt11(kube_fake: KubeFake, tmp_path: Path) -> None:
    hubble = case_repo(tmp_path, "hubble-patch") / "clusters" / "hubble-patch"
    live = live_copy(render_objects(hubble))
    kc = kube_fake.kubeconfig(tmp_path / "kc", ["hubble-patch"])
    kube_fake.add(*live)
    assert cozy("diff", hubble, "--kubeconfig", kc).code == 0
    kube_fake.objects = {k: v for k, v in kube_fake.objects.items() if k[3] != "cozystack.networking"}
    result = cozy("diff", hubble, "--kubeconfig", kc)
    assert result.code == 3
    assert "patch target missing  Package cozystack.networking" in result.stdout
    assert "error[PLT-11]" in result.stderr


def test_server_side_dry_run_uses_our_field_manager_and_writes_nothing(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    before = json.dumps(sorted(fake.objects.items()))
    result = cozy("diff", vlan, "--kubeconfig", kc, "--server-side", "--field-manager", "ci-diff")
    assert result.code == 0, result
    patches = [(p, q) for m, p, q in fake.requests if m == "PATCH"]
    assert len(patches) == 4
    assert all(q["fieldManager"] == ["ci-diff"] and q["dryRun"] == ["All"] and q["force"] == ["true"]
               for _, q in patches)
    assert json.dumps(sorted(fake.objects.items())) == before


def test_server_side_shows_what_the_server_would_store(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    obj = fake.get({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                    "metadata": {"name": "vlan200", "namespace": "tenant-prod"}})
    assert obj is not None
    obj["spec"]["config"] = "{}"
    result = cozy("diff", vlan, "--kubeconfig", kc, "--server-side")
    assert result.code == 1
    assert "to change             NetworkAttachmentDefinition tenant-prod/vlan200" in result.stdout


def test_server_side_create_of_a_missing_object(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    fake.objects = {k: v for k, v in fake.objects.items() if k[3] != "vlan200"}
    result = cozy("diff", vlan, "--kubeconfig", kc, "--server-side")
    assert result.code == 1
    assert "to create             NetworkAttachmentDefinition tenant-prod/vlan200" in result.stdout


@pytest.mark.parametrize("status, words", [(401, "401 Unauthorized"), (403, "403 Forbidden"),
                                           (500, "500 Internal Server Error")])
def test_api_errors_exit_above_one_naming_the_object(synced: tuple[KubeFake, Path, Path], status: int,
                                                     words: str) -> None:
    fake, vlan, kc = synced
    unlabel(fake, *NAD, "vlan200", "tenant-prod")
    fake.fail(r"GET /apis/k8s.cni.cncf.io/v1/namespaces/tenant-prod/network-attachment-definitions/vlan200", status)
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 3, result
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error[DIFF-LIVE]: NetworkAttachmentDefinition tenant-prod/vlan200: {words}")
    assert "no differences" not in result.stdout


def test_forbidden_list_names_the_kind(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    fake.fail(r"GET /apis/k8s.cni.cncf.io/v1/network-attachment-definitions$", 403)
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 3
    assert result.stderr.startswith("error[DIFF-LIVE]: list NetworkAttachmentDefinition -l "
                                    "render.cozystack.io/cluster: 403 Forbidden")


def test_a_passing_500_is_retried(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    unlabel(fake, *PLATFORM)
    fake.fail(r"packages/cozystack.cozystack-platform", 500, times=2)
    assert cozy("diff", vlan, "--kubeconfig", kc).code == 1  # through, after two 500s (the label is a change)
    hits = [p for m, p, _ in fake.requests if p.endswith("packages/cozystack.cozystack-platform")]
    assert len(hits) == 3


def test_retries_are_bounded(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    unlabel(fake, *PLATFORM)
    fake.fail(r"packages/cozystack.cozystack-platform", 503)
    assert cozy("diff", vlan, "--kubeconfig", kc).code == 3
    hits = [p for m, p, _ in fake.requests if p.endswith("packages/cozystack.cozystack-platform")]
    assert len(hits) == 3


def test_timeout_is_one_deadline(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    unlabel(fake, *NAD, "vlan100", "tenant-example")
    fake.slow(r"network-attachment-definitions/vlan100", 5)
    result = cozy("diff", vlan, "--kubeconfig", kc, "--timeout", "0.5")
    assert result.code == 3
    (line,) = result.stderr.splitlines()
    assert line.startswith("error[DIFF-TIMEOUT]: NetworkAttachmentDefinition tenant-example/vlan100: no answer")
    assert "--timeout 0.5s" in line


@pytest.mark.parametrize("fault, words", [("truncate", "truncated response"), ("garble", "malformed JSON response")])
def test_truncated_or_malformed_json_is_an_error(synced: tuple[KubeFake, Path, Path], fault: str, words: str) -> None:
    fake, vlan, kc = synced
    getattr(fake, fault)(r"GET /apis/cozystack.io/v1alpha1/packages$")
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 3, result
    assert result.stderr.startswith(f"error[DIFF-LIVE]: list Package -l render.cozystack.io/cluster: {words} ")


def test_refused_connection(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    fake.stop()
    result = cozy("diff", vlan, "--kubeconfig", kc, "--timeout", "5")
    assert result.code == 3
    assert result.stderr.startswith("error[DIFF-LIVE]: API discovery: connection refused")


def test_bearer_token_from_the_kubeconfig(kube_fake: KubeFake, vlan: Path, tmp_path: Path) -> None:
    kube_fake.add(*live_copy(render_objects(vlan)))
    kube_fake.token = "t0ken"
    good = kube_fake.kubeconfig(tmp_path / "good", [CLUSTER], token="t0ken")
    bad = kube_fake.kubeconfig(tmp_path / "bad", [CLUSTER], token="wrong")
    assert cozy("diff", vlan, "--kubeconfig", good).code == 0
    result = cozy("diff", vlan, "--kubeconfig", bad)
    assert result.code == 3 and "401 Unauthorized" in result.stderr
    assert "t0ken" not in result.stderr and "wrong" not in result.stderr


def test_kubeconfig_variable_and_context_choice(kube_fake: KubeFake, vlan: Path, tmp_path: Path) -> None:
    kube_fake.add(*live_copy(render_objects(vlan)))
    kc = kube_fake.kubeconfig(tmp_path / "kc", ["other", CLUSTER], current="other")
    assert cozy("diff", vlan, env={"KUBECONFIG": str(kc)}).code == 0
    assert cozy("diff", vlan, "--kubeconfig", kc, "--context", "other").code == 0
    result = cozy("diff", vlan, "--kubeconfig", kc, "--context", "missing")
    assert result.code == 3
    assert "has no context 'missing'" in result.stderr


def test_no_kubeconfig_at_all(vlan: Path, tmp_path: Path) -> None:
    result = cozy("diff", vlan, env={"KUBECONFIG": "", "HOME": str(tmp_path), "KUBERNETES_SERVICE_HOST": ""})
    assert result.code == 3
    assert result.stderr.startswith("error[DIFF-CLIENT]: no kubeconfig")


def test_all_uses_a_context_per_cluster_and_live_context(kube_fakes, tmp_path: Path) -> None:
    repo = overlays_repo(tmp_path)
    clusters = sorted(p for p in (repo / "clusters").iterdir())
    servers = {}
    for cluster in clusters:
        fake = kube_fakes()
        fake.add(*live_copy(render_objects(cluster)))
        servers[cluster.name] = fake
    gpu = repo / "clusters" / "gpu-apt-01" / "cluster.yaml"
    gpu.write_text(gpu.read_text() + "live:\n  context: admin@gpu\n")
    servers["admin@gpu"] = servers.pop("gpu-apt-01")
    kc = kubeconfig(tmp_path / "kc", servers)
    result = cozy("diff", repo, "--all", "--kubeconfig", kc, "--concurrency", "2")
    assert result.code == 0, result
    assert result.stdout.count("# cluster ") == len(clusters)
    for name, fake in servers.items():
        assert fake.requests, f"{name} was never asked"
    # each cluster read only from its own server
    for cluster in clusters:
        fake = servers["admin@gpu" if cluster.name == "gpu-apt-01" else cluster.name]
        context = "admin@gpu" if cluster.name == "gpu-apt-01" else cluster.name
        assert f"diff: {cluster.name}: compared with context {context} ({fake.url})\n" in result.stderr


def test_all_without_a_context_for_a_cluster(kube_fake: KubeFake, tmp_path: Path) -> None:
    repo = overlays_repo(tmp_path)
    kc = kube_fake.kubeconfig(tmp_path / "kc", ["vlan-apt-01"])
    result = cozy("diff", repo, "--all", "--kubeconfig", kc)
    assert result.code == 3
    assert "has no context 'gpu-apt-01'" in result.stderr


def test_all_reports_failed_clusters_and_still_shows_the_others(kube_fakes, tmp_path: Path) -> None:
    repo = overlays_repo(tmp_path)
    servers = {}
    for cluster in sorted((repo / "clusters").iterdir()):
        fake = kube_fakes()
        fake.add(*live_copy(render_objects(cluster)))
        servers[cluster.name] = fake
    servers["vlan-talos-01"].fail("packages", 403)
    result = cozy("diff", repo, "--all", "--kubeconfig", kubeconfig(tmp_path / "kc", servers))
    assert result.code == 3
    assert "# cluster vlan-talos-01" not in result.stdout
    assert "# cluster vlan-apt-01" in result.stdout
    assert "error[DIFF-LIVE]" in result.stderr and "403" in result.stderr


def test_a_kind_the_server_does_not_serve_is_to_create(kube_fake: KubeFake, vlan: Path, tmp_path: Path) -> None:
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text() + """
manifests:
  - {apiVersion: example.org/v1, kind: Widget, metadata: {name: w, namespace: tenant-prod}}
""")
    kube_fake.add(*[o for o in live_copy(render_objects(vlan)) if o["kind"] != "Widget"])
    result = cozy("diff", vlan, "--kubeconfig", kube_fake.kubeconfig(tmp_path / "kc", [CLUSTER]))
    assert result.code == 1
    assert "to create             Widget tenant-prod/w" in result.stdout


KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (CI fetches it with .ci/fetch_kubectl.py)")
def test_kubectl_get_agrees_with_the_fake(synced: tuple[KubeFake, Path, Path], tmp_path: Path) -> None:
    """The fake stays honest: kubectl reads from it what the diff tests assume the API serves."""
    fake, _vlan, kc = synced
    fake.add(realistic({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "unlabelled", "namespace": "tenant-prod"}}))
    base = [KUBECTL, "--kubeconfig", str(kc), "--cache-dir", str(tmp_path / "cache")]

    def kubectl(*args: str) -> dict:
        done = subprocess.run([*base, *args, "-o", "json", "--show-managed-fields"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    package = kubectl("get", "packages.cozystack.io", "cozystack.cozystack-platform")
    assert package == fake.get(package)
    nads = kubectl("get", "network-attachment-definitions", "-A", "-l", "render.cozystack.io/cluster=vlan-apt-01")
    assert sorted((i["metadata"]["namespace"], i["metadata"]["name"]) for i in nads["items"]) == [
        ("tenant-example", "vlan100"), ("tenant-prod", "vlan100"), ("tenant-prod", "vlan200")]
    configmaps = kubectl("get", "configmaps", "-A", "-l", "render.cozystack.io/cluster=vlan-apt-01")
    assert configmaps["items"] == []
    everything = kubectl("get", "configmaps", "-n", "tenant-prod")
    assert [i["metadata"]["name"] for i in everything["items"]] == ["unlabelled"]
    missing = subprocess.run([*base, "get", "packages.cozystack.io", "nope"], capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode == 1 and "NotFound" in missing.stderr
    fake.fail("packages", 403)
    forbidden = subprocess.run([*base, "get", "packages.cozystack.io"], capture_output=True, text=True, timeout=60)
    assert forbidden.returncode == 1 and "Forbidden" in forbidden.stderr


def test_json_output_of_an_unreadable_cluster_is_empty(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    fake.fail("packages", 500)
    result = cozy("diff", vlan, "--kubeconfig", kc, "-o", "json")
    assert result.code == 3 and result.stdout == ""
    assert result.stderr.startswith("error[DIFF-LIVE]")


def test_in_cluster_service_account_is_used_without_a_kubeconfig(vlan: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  kube_fake: KubeFake) -> None:
    """No kubeconfig anywhere and KUBERNETES_SERVICE_HOST set: the pod's service account. In-cluster
    config is always https, which the plain-HTTP fake cannot answer: the error names the path taken."""
    from kubernetes.config import incluster_config

    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    ca.write_text("not a certificate")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    port = kube_fake.url.rsplit(":", 1)[1]
    result = cozy("diff", vlan, "--timeout", "5", env={"KUBECONFIG": "", "HOME": str(tmp_path),
                                                       "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                                                       "KUBERNETES_SERVICE_PORT": port})
    assert result.code == 3, result
    assert "in-cluster" in result.stderr and "Traceback" not in result.stderr
    assert "sa-token" not in result.stderr


def test_concurrency_is_bounded(kube_fakes, tmp_path: Path) -> None:
    from tests.kubefake import Gauge

    repo = overlays_repo(tmp_path)
    gauge = Gauge()
    servers = {}
    for cluster in sorted((repo / "clusters").iterdir()):
        fake = kube_fakes()
        fake.add(*live_copy(render_objects(cluster)))
        fake.gauge = gauge
        fake.slow(r"/apis/cozystack.io/v1alpha1/packages$", 0.3)  # every cluster is busy for a while
        servers[cluster.name] = fake
    result = cozy("diff", repo, "--all", "--kubeconfig", kubeconfig(tmp_path / "kc", servers), "--concurrency", "2")
    assert result.code == 0, result
    from renderer.diff.live import LIST_CONCURRENCY

    # Two clusters at a time, each with at most LIST_CONCURRENCY lists or discovery reads in flight.
    assert 2 < gauge.peak <= 2 * LIST_CONCURRENCY


def test_plt09_from_the_cluster(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    fake.add(realistic({"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                        "metadata": {"name": "cozystack.external-dns",
                                     "labels": {"render.cozystack.io/cluster": CLUSTER},
                                     "annotations": {"helm.sh/resource-policy": "keep"}},
                        "spec": {"variant": "default"}}))
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 1
    assert "orphaned              Package cozystack.external-dns" in result.stdout
    context, warning = result.stderr.splitlines()
    assert context == f"diff: {CLUSTER}: compared with context {CLUSTER} ({fake.url})"
    assert warning.startswith("warning[PLT-09]: cozystack.external-dns is no longer rendered")


def test_an_injected_404_means_absent(synced: tuple[KubeFake, Path, Path]) -> None:
    fake, vlan, kc = synced
    unlabel(fake, *NAD, "vlan200", "tenant-prod")
    fake.fail(r"GET .*/network-attachment-definitions/vlan200$", 404)
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 1
    assert "to create             NetworkAttachmentDefinition tenant-prod/vlan200" in result.stdout


@pytest.mark.parametrize("fault", ["garble", "truncate"])
@pytest.mark.parametrize("where", [r"GET /apis$", r"GET /api/v1$", r"GET /apis/cozystack.io/v1alpha1$"])
def test_broken_discovery_is_an_input_error_not_a_crash(synced: tuple[KubeFake, Path, Path], fault: str,
                                                        where: str) -> None:
    fake, vlan, kc = synced
    getattr(fake, fault)(where)
    result = cozy("diff", vlan, "--kubeconfig", kc)
    assert result.code == 3, result
    (line,) = result.stderr.splitlines()
    assert line.startswith("error[DIFF-LIVE]: ") and "discovery" in line
    assert "truncated" in line or "malformed" in line
