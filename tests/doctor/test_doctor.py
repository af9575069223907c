"""``cozy-render doctor`` end to end: the real CLI and the real ``kubernetes`` client over HTTP against
the API fake (``tests.doctor.fake_state``), loaded with the states the GPU documentation describes.
Each documented failure must come out with its code, node and fix; each healthy route exits 0."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize(("cluster", "state"), [
    (PASSTHROUGH, fs.healthy_passthrough), (VGPU, fs.healthy_vgpu), (CONTAINER, fs.healthy_container),
    (TALOS, fs.healthy_talos)], ids=["passthrough", "vgpu", "container", "talos-native"])
def test_a_healthy_route_exits_0(doctor: Run, cluster: str, state: Callable[[], State]) -> None:
    code, out, err = doctor(cluster, state(), "-o", "json")
    assert (code, err) == (0, ""), out
    report = json.loads(out)["clusters"][0]
    assert report["healthy"] is True and report["findings"] == []
    assert report["summary"]["gpuNodes"][0]["name"] == NODE


def test_the_text_summary_names_the_route(doctor: Run) -> None:
    code, out, _ = doctor(CONTAINER, fs.healthy_container())
    assert code == 0
    assert out == (f"{CONTAINER}: route container (cozystack.gpu-operator variant container, standalone): healthy; "
                   f"1 GPU node, 6/6 pods ready in {NS}\n")


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
