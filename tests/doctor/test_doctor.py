"""``cozy-render doctor`` end to end: the real CLI and the real ``kubernetes`` client over HTTP against
the API fake (``tests.doctor.fake_state``), loaded with the states the GPU documentation describes.
Each documented failure must come out with its code, node and fix; each healthy route exits 0."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from renderer.cli import main
from tests.doctor import fake_state as fs
from tests.doctor.fake_state import NODE, NS, DoctorFake, State

PROJECT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.loopback  # the API fake listens on 127.0.0.1

# The sample clusters, one per route (overlays/clusters/*).
PASSTHROUGH = "gpu-passthrough-01"
VGPU = "vgpu-apt-01"
CONTAINER = "gpu-apt-01"
TALOS = "gpu-talos-01"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(PROJECT / "overlays", target)
    (target / ".git").mkdir()
    return target


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def doctor(repo: Path, tmp_path: Path, doctor_fake: DoctorFake) -> Run:
    def run(cluster: str, state: State, *args: str) -> tuple[int, str, str]:
        doctor_fake.load(state)
        kubeconfig = doctor_fake.kubeconfig(tmp_path / "kubeconfig", contexts=[cluster])
        result = CliRunner().invoke(main, ["doctor", str(repo / "clusters" / cluster), "--kubeconfig",
                                           str(kubeconfig), *args])
        return result.exit_code, result.stdout, result.stderr

    return run


def findings(out: str) -> list[dict[str, Any]]:
    return [f for c in json.loads(out)["clusters"] for f in c["findings"]]


def codes(out: str) -> list[str]:
    return [f["code"] for f in findings(out)]


# --- healthy routes ------------------------------------------------------------------------------


@pytest.mark.parametrize(("cluster", "state", "route"), [
    (PASSTHROUGH, fs.healthy_passthrough, ("passthrough", "default", "bundle")),
    (VGPU, fs.healthy_vgpu, ("vgpu", "vgpu", "bundle")),
    (CONTAINER, fs.healthy_container, ("container", "container", "standalone")),
    (TALOS, fs.healthy_talos, ("talos-native", "default", "standalone"))],
    ids=["passthrough", "vgpu", "container", "talos-native"])
def test_a_healthy_route_exits_0(doctor: Run, cluster: str, state: Callable[[], State],
                                 route: tuple[str, str, str]) -> None:
    code, out, err = doctor(cluster, state(), "-o", "json")
    assert (code, err) == (0, ""), out
    report = json.loads(out)["clusters"][0]
    assert report["healthy"] is True and report["findings"] == []
    assert (report["route"]["name"], report["route"]["variant"], report["route"]["origin"]) == route
    assert report["summary"]["gpuNodes"][0]["name"] == NODE


def test_the_text_summary_names_the_route_and_what_it_read(doctor: Run, doctor_fake: DoctorFake) -> None:
    code, out, _ = doctor(CONTAINER, fs.healthy_container())
    assert code == 0
    assert out == (f"{CONTAINER}: route container (cozystack.gpu-operator variant container, standalone): healthy; "
                   f"1 GPU node, 6/6 pods ready in {NS}; read from context {CONTAINER} at {doctor_fake.url}\n")


# --- passthrough ---------------------------------------------------------------------------------


def test_passthrough_on_a_host_with_the_driver(doctor: Run) -> None:
    code, out, _ = doctor(PASSTHROUGH, fs.host_driver_passthrough(), "-o", "json")
    assert code == 1
    (finding,) = findings(out)  # one root cause: no separate pod, validator or allocatable findings
    assert finding["code"] == "DOC-HOST-DRIVER" and finding["node"] == NODE
    assert finding["object"] == f"Pod/{NS}/nvidia-vfio-manager-8xk2p"
    message = finding["message"]
    assert "Init:CrashLoopBackOff" in message and '"Host driver detected: 580.82.07"' in message
    assert "nvidia.com/gpu.deploy.driver=pre-installed" in message
    assert "device not bound to 'vfio-pci'" in message


def test_the_text_report_points_at_the_documented_fix(doctor: Run, cli_rules: Callable[[str], str]) -> None:
    code, out, _ = doctor(PASSTHROUGH, fs.host_driver_passthrough())
    assert code == 1
    assert f"error[DOC-HOST-DRIVER] node {NODE} Pod/{NS}/nvidia-vfio-manager-8xk2p: " in out
    assert "cozy-render rules CODE (DOC-HOST-DRIVER)" in out
    explained = cli_rules("DOC-HOST-DRIVER")
    for step in ("dpkg-query -W -f", "blacklist-nvidia.conf", "update-initramfs -u -k all",
                 "nvidia.com/gpu.deploy.driver-", "container"):
        assert step in explained


@pytest.fixture
def cli_rules() -> Callable[[str], str]:
    def explain(code: str) -> str:
        result = CliRunner().invoke(main, ["rules", code])
        assert result.exit_code == 0, result.output
        return result.stdout

    return explain


def test_a_label_left_after_the_purge_is_a_warning(doctor: Run) -> None:
    state = fs.healthy_passthrough()
    state.find("Node", NODE)["metadata"]["labels"]["nvidia.com/gpu.deploy.driver"] = "pre-installed"
    code, out, _ = doctor(PASSTHROUGH, state, "-o", "json")
    assert code == 0  # the route works; the label only misleads later
    (finding,) = findings(out)
    assert (finding["code"], finding["severity"], finding["node"]) == ("DOC-DRIVER-LABEL", "warning", NODE)
    assert f"kubectl label node {NODE} nvidia.com/gpu.deploy.driver-" in finding["message"]


def test_a_gpu_not_bound_to_vfio_without_a_host_driver(doctor: Run) -> None:
    state = fs.host_driver_passthrough()
    labels = state.find("Node", NODE)["metadata"]["labels"]
    del labels["nvidia.com/gpu.deploy.driver"]
    state.logs.pop((NS, "nvidia-vfio-manager-8xk2p", "k8s-driver-manager", True))
    code, out, _ = doctor(PASSTHROUGH, state, "-o", "json")
    assert code == 1
    assert codes(out) == ["DOC-VFIO-UNBOUND", "DOC-POD"]
    assert findings(out)[1]["object"] == f"Pod/{NS}/nvidia-vfio-manager-8xk2p"


# --- container -----------------------------------------------------------------------------------


def test_a_leftover_vm_passthrough_label(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.leftover_workload_label(), "-o", "json")
    assert code == 1
    assert codes(out) == ["DOC-WORKLOAD-LABEL"]  # one cause, one finding (issue 32 item 5)
    (label,) = findings(out)
    assert label["node"] == NODE and "nvidia.com/gpu.workload.config=vm-passthrough" in label["message"]
    assert f"kubectl label node {NODE} nvidia.com/gpu.workload.config-" in label["message"]
    assert label["message"].endswith(f"; so node {NODE} advertises no allocatable nvidia.com/gpu")


def test_containerd_without_the_nvidia_runtime(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.runtime_not_registered(), "-o", "json")
    assert code == 1
    assert codes(out) == ["DOC-RUNTIME"]
    runtime = findings(out)[0]
    assert runtime["node"] == NODE and 'no runtime for "nvidia" is configured' in runtime["message"]
    assert "nvidia-device-plugin-daemonset-cqj9w" in runtime["message"]


def test_no_nvidia_runtime_class(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.no_runtime_class(), "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-RUNTIMECLASS"])
    assert findings(out)[0]["object"] == "RuntimeClass/nvidia"


def test_the_validator_stuck_at_driver_validation(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.driver_validation_stuck(), "-o", "json")
    assert code == 1
    assert codes(out) == ["DOC-VALIDATOR"]
    validator = findings(out)[0]
    assert validator["object"] == f"Pod/{NS}/nvidia-operator-validator-q5n4k" and validator["node"] == NODE
    assert 'Init:0/4, driver-validation: "command failed, retrying after 5 seconds"' in validator["message"]


def test_hami_on_the_container_variant(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.hami_stacked(), "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-HAMI-STACKED"])


def test_operands_the_container_variant_pins_off(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.operands_of_another_variant(), "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-PACKAGE", "DOC-OPERANDS"])
    assert "has variant default on the cluster, the render says container" in findings(out)[0]["message"]
    assert "nvidia-vfio-manager" in findings(out)[1]["message"] and "variant default" in findings(out)[1]["message"]


def test_the_root_of_a_dependency_chain_is_named(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.dependencies_not_ready(), "-o", "json")
    assert code == 1
    (finding,) = [f for f in findings(out) if f["code"] == "DOC-PACKAGE"]
    assert finding["object"] == "Package/cozystack.networking"
    assert finding["message"] == ("Package cozystack.gpu-operator is DependenciesNotReady: root cozystack.networking "
                                  "is Ready=False HelmReleaseFailed: HelmRelease cozy-cilium/cilium failed: install "
                                  "retries exhausted (chain cozystack.gpu-operator -> cozystack.networking)")


def test_a_bundle_package_not_rendered_yet_names_the_platform(doctor: Run) -> None:
    state = fs.healthy_passthrough().drop("Package", "cozystack.gpu-operator")
    code, out, _ = doctor(PASSTHROUGH, state, "-o", "json")
    assert code == 1
    assert findings(out)[0]["message"].endswith("cozystack.cozystack-platform is Ready")


# --- vGPU ----------------------------------------------------------------------------------------


def test_the_vgpu_device_manager_on_an_sriov_gpu(doctor: Run) -> None:
    code, out, _ = doctor(VGPU, fs.vgpu_device_manager_sriov(), "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-VGPU-DEVICE-MANAGER"])
    finding = findings(out)[0]
    assert finding["node"] == NODE and "CrashLoopBackOff" in finding["message"]
    assert "no parent devices found for GPU at index '0'" in finding["message"]


def test_a_vgpu_manager_image_that_cannot_be_pulled(doctor: Run) -> None:
    code, out, _ = doctor(VGPU, fs.vgpu_image_unpullable(), "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-VGPU-IMAGE"])
    message = findings(out)[0]["message"]
    assert f"ImagePullBackOff for {fs.VGPU_IMAGE}" in message and "401 Unauthorized" in message


def test_a_missing_pull_secret_in_cozy_gpu_operator(doctor: Run) -> None:
    code, out, _ = doctor(VGPU, fs.vgpu_image_unpullable(secret=False), "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-PULL-SECRET", "DOC-VGPU-IMAGE"])
    assert findings(out)[0]["object"] == f"Secret/{NS}/nvidia-registry-secret"


# --- Talos native --------------------------------------------------------------------------------


def test_talos_without_the_driver_files(doctor: Run) -> None:
    code, out, _ = doctor(TALOS, fs.talos_compat_failing(), "-o", "json")
    assert code == 1
    assert codes(out) == ["DOC-TALOS-COMPAT"]  # the marker and the allocatable are its victims
    (compat,) = findings(out)
    assert compat["node"] == NODE and "libnvidia-ml.so.1" in compat["message"]
    assert "/run/nvidia/validations/.driver-ctr-ready was never written" in compat["message"]
    assert "advertises no allocatable nvidia.com/gpu" in compat["message"]


def test_talos_compat_daemonset_not_synced(doctor: Run) -> None:
    state = fs.healthy_talos().drop("DaemonSet", "nvidia-driver-compat").drop("Pod", "nvidia-driver-compat-x2d7p")
    code, out, _ = doctor(TALOS, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-TALOS-COMPAT"])


# --- reading the cluster -------------------------------------------------------------------------


def test_a_cluster_that_cannot_be_read_exits_3_with_nothing_on_stdout(doctor: Run, doctor_fake: DoctorFake) -> None:
    doctor_fake.fail(r"GET /api/v1/namespaces/cozy-gpu-operator/pods$", 403)
    code, out, err = doctor(CONTAINER, fs.healthy_container())
    assert (code, out) == (3, "")
    assert "error[DIFF-LIVE]: list Pod -n cozy-gpu-operator: 403 Forbidden" in err


def test_the_timeout_covers_every_request(doctor: Run, doctor_fake: DoctorFake) -> None:
    doctor_fake.slow(r"/api/v1/nodes", 3.0)
    code, out, err = doctor(CONTAINER, fs.healthy_container(), "--timeout", "0.5")
    assert (code, out) == (3, "")
    assert "error[DIFF-TIMEOUT]" in err


def test_doctor_only_reads(doctor: Run, doctor_fake: DoctorFake) -> None:
    doctor(PASSTHROUGH, fs.host_driver_passthrough())
    assert {method for method, _, _ in doctor_fake.requests} == {"GET"}
    logs = [(path, query) for _, path, query in doctor_fake.requests if path.endswith("/log")]
    assert (f"/api/v1/namespaces/{NS}/pods/nvidia-vfio-manager-8xk2p/log",
            {"container": ["k8s-driver-manager"], "previous": ["true"], "tailLines": ["200"],
             "limitBytes": [str(256 * 1024)]}) in logs  # bounded on every read (issue 32 item 4)


def test_all_clusters_each_through_its_own_context(repo: Path, tmp_path: Path) -> None:
    from tests.kubefake import kubeconfig

    fakes = {name: DoctorFake() for name in (CONTAINER, PASSTHROUGH)}
    try:
        fakes[CONTAINER].load(fs.leftover_workload_label())
        fakes[PASSTHROUGH].load(fs.healthy_passthrough())
        config = kubeconfig(tmp_path / "kubeconfig", fakes)  # type: ignore[arg-type]
        for name in ("gpu-talos-01", "vgpu-apt-01"):  # the clusters without GPUs stay: no context needed
            shutil.rmtree(repo / "clusters" / name)
        result = CliRunner().invoke(main, ["doctor", str(repo), "--all", "--kubeconfig", str(config),
                                           "--concurrency", "1", "-o", "json"])
    finally:
        for fake in fakes.values():
            fake.stop()
    assert result.exit_code == 1, result.output
    clusters = {c["cluster"]: c for c in json.loads(result.stdout)["clusters"]}
    assert list(clusters) == [CONTAINER, PASSTHROUGH, "hubble-generic-01", "vlan-apt-01", "vlan-talos-01"]
    assert clusters[PASSTHROUGH]["healthy"] is True
    assert {clusters[n]["route"]["name"] for n in ("hubble-generic-01", "vlan-apt-01", "vlan-talos-01")} == {"none"}
    assert [f["code"] for f in clusters[CONTAINER]["findings"]] == ["DOC-WORKLOAD-LABEL"]


def test_all_with_context_is_a_usage_error(repo: Path) -> None:
    result = CliRunner().invoke(main, ["doctor", str(repo), "--all", "--context", "x"])
    assert result.exit_code == 2
    assert "error[DIFF-USAGE]: --all reads each cluster through its own context" in result.stderr


# --- the verification Job (gpu.verify) -----------------------------------------------------------


def _verify(repo: Path, cluster: str = CONTAINER) -> None:
    path = repo / "clusters" / cluster / "cluster.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("gpu:\n  variant: container",
                                                             "gpu:\n  verify: true\n  variant: container"),
                    encoding="utf-8")


@pytest.mark.parametrize(("outcome", "exit_code", "found", "summary"), [
    ("succeeded", 0, [], "verification Job succeeded"),
    ("failed", 1, ["DOC-VERIFY"], "verification Job failed"),
    ("pending", 0, ["DOC-VERIFY-PENDING"], "verification Job pending"),
])
def test_doctor_reports_the_verification_job(doctor: Run, repo: Path, outcome: str, exit_code: int,
                                             found: list[str], summary: str) -> None:
    _verify(repo)
    code, out, _ = doctor(CONTAINER, fs.verify_job(fs.healthy_container(), outcome))
    assert code == exit_code, out
    assert summary in out.splitlines()[0]
    assert [line.split("]")[0].split("[")[1] for line in out.splitlines()[1:-1]] == found
    if outcome == "failed":
        assert '"Failed to initialize NVML: Unknown Error"' in out and "BackoffLimitExceeded" in out
    if outcome == "pending":
        assert "3 Insufficient nvidia.com/gpu" in out


def test_a_verification_job_not_synced_yet(doctor: Run, repo: Path) -> None:
    _verify(repo, TALOS)
    code, out, _ = doctor(TALOS, fs.healthy_talos(), "-o", "json")
    assert code == 0
    assert codes(out) == ["DOC-VERIFY-PENDING"]
    assert json.loads(out)["clusters"][0]["summary"]["verification"] == "pending"


def test_a_passthrough_node_without_devices(doctor: Run) -> None:
    state = fs.healthy_passthrough()
    state.find("Node", NODE)["status"]["allocatable"].pop("nvidia.com/TU104GL_TESLA_T4")
    code, out, _ = doctor(PASSTHROUGH, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-NO-DEVICES"])
    assert findings(out)[0]["node"] == NODE


def test_an_unpullable_vgpu_manager_explains_the_missing_devices(doctor: Run) -> None:
    state = fs.vgpu_image_unpullable(secret=False)
    state.find("Node", NODE)["status"]["allocatable"].pop("nvidia.com/NVIDIA_A100-40C")
    code, out, _ = doctor(VGPU, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-PULL-SECRET", "DOC-VGPU-IMAGE"])


def test_all_reads_at_most_concurrency_clusters_at_once(repo: Path, tmp_path: Path) -> None:
    from tests.kubefake import Gauge, kubeconfig

    gauge = Gauge()
    fakes = {name: DoctorFake() for name in (CONTAINER, PASSTHROUGH, TALOS)}
    try:
        for name, fake in fakes.items():
            fake.load({CONTAINER: fs.healthy_container, PASSTHROUGH: fs.healthy_passthrough,
                       TALOS: fs.healthy_talos}[name]())
            fake.gauge = gauge
            # one nodes list per cluster, after discovery (which runs several requests at once): so
            # the requests in flight to it are the clusters being read at once
            fake.gauge_only = re.compile(r"/api/v1/nodes$")
            fake.slow(r"/api/v1/nodes$", 0.3)
        config = kubeconfig(tmp_path / "kubeconfig", fakes)  # type: ignore[arg-type]
        for name in ("hubble-generic-01", "vgpu-apt-01", "vlan-apt-01", "vlan-talos-01"):
            shutil.rmtree(repo / "clusters" / name)
        result = CliRunner().invoke(main, ["doctor", str(repo), "--all", "--kubeconfig", str(config),
                                           "--concurrency", "2"])
    finally:
        for fake in fakes.values():
            fake.stop()
    assert result.exit_code == 0, result.output
    assert gauge.peak == 2
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == [CONTAINER, PASSTHROUGH, TALOS]


def test_rules_explains_every_doctor_code_with_its_fix(cli_rules: Callable[[str], str]) -> None:
    from renderer.doctor.codes import CODES

    assert len(CODES) >= 15
    for code in CODES:
        text = cli_rules(code.id)
        assert text.startswith(f"{code.id} ({code.severity}): {code.summary}")
        assert "`" in text and "Sources:" in text, code.id  # a command or a name to act on, and where it is from


def test_the_readme_example_is_what_doctor_prints(doctor: Run, doctor_fake: DoctorFake) -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    block = readme.split(f"$ cozy-render doctor clusters/{PASSTHROUGH}\n", 1)[1].split("```", 1)[0]
    code, out, _ = doctor(PASSTHROUGH, fs.host_driver_passthrough())
    assert code == 1
    assert out.replace(doctor_fake.url, "https://203.0.113.10:6443") == block


# --- expected state per route (issue 32 item 1) --------------------------------------------------


def _errors(out: str) -> list[str]:
    return [f["code"] for f in findings(out) if f["severity"] == "error"]


def test_no_pods_at_all_is_never_healthy(doctor: Run) -> None:
    state = fs.healthy_container()
    state.objects = [o for o in state.objects if o["kind"] != "Pod"]
    for ds in (o for o in state.objects if o["kind"] == "DaemonSet"):
        ds["status"]["numberReady"] = 0
    state.find("Deployment", "gpu-operator")["status"]["readyReplicas"] = 0
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert code == 1 and json.loads(out)["clusters"][0]["healthy"] is False
    assert "DOC-OPERATOR" in _errors(out) and "DOC-DAEMONSET" in _errors(out)


def test_device_plugin_and_validators_deleted(doctor: Run) -> None:
    state = fs.healthy_container()
    for name in ("nvidia-device-plugin-daemonset", "nvidia-operator-validator"):
        state.drop("DaemonSet", name)
    for name in ("nvidia-device-plugin-daemonset-cqj9w", "nvidia-operator-validator-q5n4k", "nvidia-cuda-validator-tjkfh"):
        state.drop("Pod", name)
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert code == 1
    missing = [f["object"] for f in findings(out) if f["code"] == "DOC-DAEMONSET"]
    assert missing == [f"DaemonSet/{NS}/nvidia-device-plugin-daemonset", f"DaemonSet/{NS}/nvidia-operator-validator"]


def test_the_operator_uninstalled_is_one_finding(doctor: Run) -> None:
    state = fs.healthy_container()  # allocatable stays stale: nvidia.com/gpu 2
    state.objects = [o for o in state.objects if o["kind"] not in ("Pod", "DaemonSet", "Deployment", "ClusterPolicy",
                                                                   "RuntimeClass")]
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-OPERATOR"])  # no runtime advice, no operand victims
    assert "not installed or not reconciled" in findings(out)[0]["message"]


def test_the_operator_not_installed_because_its_package_is_absent(doctor: Run) -> None:
    state = fs.healthy_container().drop("Package", "cozystack.gpu-operator")
    state.objects = [o for o in state.objects if o["kind"] not in ("Pod", "DaemonSet", "Deployment", "ClusterPolicy")]
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-PACKAGE"])  # one cause, one finding


def test_a_validator_scheduled_nowhere(doctor: Run) -> None:
    state = fs.healthy_container()
    state.find("DaemonSet", "nvidia-operator-validator")["status"].update(desiredNumberScheduled=0, numberReady=0)
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-DAEMONSET"])
    assert "scheduled on no node (desired 0) though 1 GPU node (gpu-node-1)" in findings(out)[0]["message"]


def test_a_daemonset_missing_a_pod_on_a_gpu_node(doctor: Run) -> None:
    state = fs.healthy_passthrough().drop("Pod", "nvidia-sandbox-validator-7h4kq")
    state.find("DaemonSet", "nvidia-sandbox-validator")["status"]["numberReady"] = 0
    code, out, _ = doctor(PASSTHROUGH, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-DAEMONSET"])
    assert findings(out)[0]["node"] == NODE and "0/1 pods ready; no pod on gpu-node-1" in findings(out)[0]["message"]


def test_a_cluster_policy_not_ready(doctor: Run) -> None:
    state = fs.healthy_container()
    state.find("ClusterPolicy", "cluster-policy")["status"]["state"] = "notReady"
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-CLUSTERPOLICY"])
    assert "status.state notReady, not ready" in findings(out)[0]["message"]


# --- the right cluster (issue 32 item 2) ---------------------------------------------------------


def test_another_clusters_api_is_refused_without_a_fix(doctor: Run) -> None:
    state = fs.host_driver_passthrough()
    state.find("Package", "cozystack.gpu-operator")["metadata"]["labels"] = {
        "render.cozystack.io/cluster": PASSTHROUGH}
    code, out, err = doctor(CONTAINER, state)
    assert (code, out) == (3, "")
    assert "error[DIFF-CONTEXT]" in err and PASSTHROUGH in err and CONTAINER in err
    assert "kubectl label" not in err


# --- degrade, don't abort (issue 32 item 4) ------------------------------------------------------


def test_a_forbidden_log_is_a_note_and_the_diagnosis_stands(doctor: Run, doctor_fake: DoctorFake) -> None:
    doctor_fake.fail(r"/log$", 403)
    code, out, err = doctor(PASSTHROUGH, fs.host_driver_passthrough(), "-o", "json")
    assert (code, err) == (1, ""), err
    (finding,) = findings(out)
    assert (finding["code"], finding["node"]) == ("DOC-HOST-DRIVER", NODE)
    assert any("get pods/log" in note for note in finding["notes"])


def test_a_log_over_the_bound_costs_no_more_than_the_bound(doctor: Run, doctor_fake: DoctorFake) -> None:
    state = fs.host_driver_passthrough()
    huge = "x" * (2 * 1024 * 1024) + "\n" + fs.HOST_DRIVER_LOG.format(node=NODE)
    state.log("nvidia-vfio-manager-8xk2p", "k8s-driver-manager", huge, previous=True)
    doctor_fake.ignore_limit_bytes = True  # the server sends it whole
    code, out, _ = doctor(PASSTHROUGH, state, "-o", "json")
    assert code == 1 and codes(out) == ["DOC-HOST-DRIVER"]  # label + status still decide it


# --- hostile shapes and chains (issue 34 items 15-17) --------------------------------------------


def test_wrong_types_are_a_finding_per_object_never_exit_4(doctor: Run) -> None:
    state = fs.healthy_container()
    state.find("Node", NODE)["metadata"]["labels"]["nvidia.com/gpu.count"] = ["2"]
    pod = state.find("Pod", "nvidia-device-plugin-daemonset-cqj9w")
    pod["status"]["containerStatuses"][0]["restartCount"] = "many"
    state.find("Package", "cozystack.gpu-operator")["status"]["conditions"] = {"type": "Ready"}
    code, out, err = doctor(CONTAINER, state, "-o", "json")
    assert code == 1 and err == ""
    shaped = {f["object"]: f["message"] for f in findings(out) if f["code"] == "DOC-SHAPE"}
    assert set(shaped) == {f"Node/{NODE}", f"Pod/{NS}/nvidia-device-plugin-daemonset-cqj9w",
                           "Package/cozystack.gpu-operator"}
    assert "metadata.labels.nvidia.com/gpu.count is a list, not a string" in shaped[f"Node/{NODE}"]


def test_a_very_long_dependency_chain_costs_no_stack(doctor: Run) -> None:
    state = fs.healthy_container().drop("Package", "cozystack.gpu-operator")
    chain = ["cozystack.gpu-operator"] + [f"chain-{i}" for i in range(3000)]
    for name, dep in itertools.pairwise(chain):
        variant = "container" if name == "cozystack.gpu-operator" else None
        state.add(fs.package(name, variant, ready=False, reason="DependenciesNotReady", message="",
                             dependencies={dep: False}))
    code, out, err = doctor(CONTAINER, state, "-o", "json", "--timeout", "60")
    assert code == 1 and err == ""
    assert "longer than 64 Packages" in next(f for f in findings(out) if f["code"] == "DOC-PACKAGE")["message"]


# --- fixes that fit (issue 32 item 5) ------------------------------------------------------------


def test_the_device_manager_fix_follows_the_gpu_model(doctor: Run, repo: Path) -> None:
    _, out, _ = doctor(VGPU, fs.vgpu_device_manager_sriov(), "-o", "json")  # vgpu-apt-01: host.gpuModel A100
    assert "A100 is an mdev GPU" in findings(out)[0]["message"] and "enabled: false" not in findings(out)[0]["message"]
    path = repo / "clusters" / VGPU / "cluster.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("gpuModel: A100", "gpuModel: L40S"), encoding="utf-8")
    _, out, _ = doctor(VGPU, fs.vgpu_device_manager_sriov(), "-o", "json")
    assert "L40S is an SR-IOV GPU: set gpu.vgpuDeviceManager.enabled: false" in findings(out)[0]["message"]


def test_quoted_log_lines_are_the_message_only(doctor: Run) -> None:
    state = fs.vgpu_device_manager_sriov()
    state.log("nvidia-vgpu-device-manager-m2k8d", "nvidia-vgpu-device-manager",
              'time="2026-12-01T08:00:00Z" level=fatal msg="no parent devices found for GPU at index \\"0\\""\n',
              previous=True)
    _, out, _ = doctor(VGPU, state, "-o", "json")
    message = findings(out)[0]["message"]
    assert ': "no parent devices found for GPU at index "0""' in message and "level=" not in message


def test_runtime_handlers_without_nvidia(doctor: Run) -> None:
    state = fs.healthy_container()
    state.find("Node", NODE)["status"]["runtimeHandlers"] = [{"name": "runc"}, {"name": ""}]
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert (code, codes(out)) == (1, ["DOC-RUNTIME"])
    assert "runtimeHandlers are (default), runc, none nvidia" in findings(out)[0]["message"]


def test_the_host_driver_fix_quotes_the_purge_warning(cli_rules: Callable[[str], str]) -> None:
    text = cli_rules("DOC-HOST-DRIVER")
    assert "nvidia-dkms-*" in text and "nvidia-kernel-*" in text
    assert "k8s-driver-manager#191" not in text  # that issue does not say what it was cited for


# --- the GPUs each node offers (issue 32 item 6) -------------------------------------------------

H200 = Path(__file__).resolve().parent / "data" / "h200"  # real output, see its README


def test_a_node_names_its_gpus_from_gfd_labels_and_the_verification_job(doctor: Run, repo: Path) -> None:
    _verify(repo)
    state = fs.verify_job(fs.healthy_container(), "succeeded")
    state.log("cuda-smoke-7xv2q", "cuda", (H200 / "nvidia-smi.txt").read_text(encoding="utf-8"), namespace="default")
    state.find("Node", NODE)["metadata"]["labels"].update({
        "nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.memory": "143771",
        "nvidia.com/cuda.driver.major": "580", "nvidia.com/cuda.driver.minor": "159", "nvidia.com/cuda.driver.rev": "04",
        "nvidia.com/cuda.runtime.major": "13", "nvidia.com/cuda.runtime.minor": "0", "nvidia.com/mig.strategy": "single"})
    code, out, _ = doctor(CONTAINER, state, "-o", "json")
    assert code == 0, out
    gpus = json.loads(out)["clusters"][0]["summary"]["gpuNodes"][0]["gpus"]
    assert (gpus["product"], gpus["count"], gpus["memoryMiB"]) == ("NVIDIA-H200", 1, 143771)
    assert (gpus["driver"], gpus["cuda"], gpus["mig"]) == ("580.159.04", "13.0", {"strategy": "single"})
    assert gpus["gpus"] == [{"index": 0, "name": "NVIDIA H200", "memoryMiB": 143771, "mig": "disabled"}]
    code, out, _ = doctor(CONTAINER, state)
    assert (f"  node {NODE}: 1x NVIDIA-H200 (143771 MiB), driver 580.159.04, CUDA 13.0, MIG strategy single, "
            "disabled, from GPU feature discovery labels and the verification Job's nvidia-smi\n") in out


@pytest.mark.parametrize(("name", "expected"), [
    ("nvidia-smi.txt", {"driver": "580.159.04", "cuda": "13.0",
                        "gpus": [{"index": 0, "name": "NVIDIA H200", "memoryMiB": 143771, "mig": "disabled"}]}),
    ("nvidia-smi-L.txt", {"gpus": [{"index": 0, "name": "NVIDIA H200"}]}),
    ("nvidia-smi-query.csv", {"driver": "580.159.04",
                              "gpus": [{"index": 0, "name": "NVIDIA H200", "memoryMiB": 143771, "mig": "disabled"}]}),
])
def test_real_nvidia_smi_output_is_read(name: str, expected: dict[str, Any]) -> None:
    from renderer.doctor.gpus import parse_nvidia_smi

    assert parse_nvidia_smi((H200 / name).read_text(encoding="utf-8")) == expected


def test_doctor_json_validates_against_its_schema(doctor: Run, repo: Path) -> None:
    import jsonschema

    schema = json.loads(CliRunner().invoke(main, ["schema", "output", "doctor"]).stdout)
    _verify(repo)
    _, out, _ = doctor(CONTAINER, fs.verify_job(fs.host_driver_passthrough(), "failed"), "-o", "json")
    document = json.loads(out)
    assert (document["apiVersion"], document["kind"]) == ("cozy-render/v1", "DoctorReport")
    assert list(jsonschema.Draft7Validator(schema).iter_errors(document)) == []
    assert all(f["cluster"] == CONTAINER for f in findings(out))


def test_a_slow_log_is_a_note_not_a_timeout(doctor: Run, doctor_fake: DoctorFake) -> None:
    doctor_fake.slow(r"/log$", 3.0)
    code, out, err = doctor(PASSTHROUGH, fs.host_driver_passthrough(), "-o", "json", "--timeout", "8")
    assert (code, err) == (1, ""), err
    (finding,) = findings(out)
    assert finding["code"] == "DOC-HOST-DRIVER"
    assert any("no answer in the time a log read gets" in note for note in finding["notes"])


def test_a_tenant_pod_is_never_taken_for_an_operator_pod(doctor: Run, doctor_fake: DoctorFake) -> None:
    tenant = fs.pod("nvidia-vfio-manager-evil1", NODE, namespace="tenant-a",
                    init=[fs.status("k8s-driver-manager", fs.crashed(), restarts=1)])
    doctor_fake.foreign["Pod"] = [{k: v for k, v in tenant.items() if k not in ("apiVersion", "kind")}]
    state = fs.healthy_passthrough()
    state.log("nvidia-vfio-manager-evil1", "k8s-driver-manager", "Host driver detected: 1.2.3\n", namespace="tenant-a")
    code, out, _ = doctor(PASSTHROUGH, state, "-o", "json")
    assert (code, findings(out)) == (0, [])  # its log is never read, its status never judged
    assert not [p for _, p, _ in doctor_fake.requests if "tenant-a" in p]


def test_all_names_the_cluster_of_each_connection_error(repo: Path, tmp_path: Path) -> None:
    from tests.kubefake import kubeconfig

    fakes = {name: DoctorFake() for name in (CONTAINER, PASSTHROUGH)}
    try:
        fakes[CONTAINER].load(fs.healthy_container())
        fakes[PASSTHROUGH].load(fs.healthy_passthrough())
        fakes[PASSTHROUGH].fail(r"/api/v1/nodes$", 403)
        config = kubeconfig(tmp_path / "kubeconfig", fakes)  # type: ignore[arg-type]
        for name in ("gpu-talos-01", "vgpu-apt-01"):
            shutil.rmtree(repo / "clusters" / name)
        result = CliRunner().invoke(main, ["doctor", str(repo), "--all", "--kubeconfig", str(config), "-o", "json"])
    finally:
        for fake in fakes.values():
            fake.stop()
    assert result.exit_code == 3, result.output
    (error,) = json.loads(result.stdout)["errors"]
    assert error["cluster"] == PASSTHROUGH and error["code"] == "DIFF-LIVE"
    assert "doctor needs list nodes" in error["message"]  # the verb and resource that failed


def test_a_log_that_drips_one_byte_at_a_time_is_a_note(doctor: Run, doctor_fake: DoctorFake) -> None:
    from tests.kubefake import Fault

    doctor_fake.faults.append(Fault(re.compile(r"/log$"), "drip", 6.0, [-1]))  # a byte every 0.2 s
    code, out, err = doctor(PASSTHROUGH, fs.host_driver_passthrough(), "-o", "json", "--timeout", "8")
    assert (code, err) == (1, ""), err  # the deadline is checked between bytes; the cluster is still diagnosed
    assert codes(out) == ["DOC-HOST-DRIVER"] and findings(out)[0]["notes"]


def _mutate(state: State, kind: str, name: str, path: tuple[str, ...], value: Any) -> State:
    node = state.find(kind, name)
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return state


@pytest.mark.parametrize(("kind", "name", "path", "value"), [
    ("Node", NODE, ("status", "allocatable"), ["nvidia.com/gpu"]),
    ("Node", NODE, ("metadata", "labels"), "nvidia.com/gpu.present=true"),
    ("Node", NODE, ("status", "runtimeHandlers"), {"name": "nvidia"}),
    ("Pod", "nvidia-device-plugin-daemonset-cqj9w", ("status",), "Running"),
    ("Pod", "nvidia-device-plugin-daemonset-cqj9w", ("spec", "nodeName"), 7),
    ("DaemonSet", "nvidia-device-plugin-daemonset", ("status", "numberReady"), "1"),
    ("Deployment", "gpu-operator", ("status", "readyReplicas"), True),
    ("ClusterPolicy", "cluster-policy", ("status", "state"), {"ready": True}),
    ("Package", "cozystack.gpu-operator", ("status", "dependencies"), ["cozystack.networking"]),
])
def test_a_field_of_the_wrong_type_never_ends_the_run(doctor: Run, kind: str, name: str, path: tuple[str, ...],
                                                      value: Any) -> None:
    state = _mutate(fs.runtime_not_registered(), kind, name, path, value)
    for event in (o for o in state.objects if o["kind"] == "Event"):
        event["involvedObject"] = "Pod/nvidia-device-plugin-daemonset-cqj9w"  # an Event reference of the wrong type
    code, out, err = doctor(CONTAINER, state, "-o", "json")
    assert (code, err) == (1, ""), err
    assert "DOC-SHAPE" in codes(out)
