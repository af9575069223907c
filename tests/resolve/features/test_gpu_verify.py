"""gpu.verify: the documentation's sample CUDA pod as a Job (issue 22 item 2): rendered only when asked
for, only on the pod routes, passing the output schemas and `kubectl kustomize`, and split for Flux."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from renderer.check.schemas.catalog import CORE_KINDS
from renderer.errors import RenderError
from tests.conftest import OVERLAYS
from tests.helpers import render

KUBECTL = shutil.which("kubectl")
VERIFY_LABEL = "render.cozystack.io/gpu-verify"
VARIANT_FILE = Path(__file__).resolve().parents[3] / "variants" / "gpu" / "verify-cuda-job.yaml"


def _repo(tmp_path: Path, cluster: str, verify: bool = True) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(OVERLAYS, repo)
    (repo / ".git").mkdir()
    path = repo / "clusters" / cluster / "cluster.yaml"
    text = path.read_text(encoding="utf-8")
    assert "\ngpu:\n" in text
    path.write_text(text.replace("\ngpu:\n", f"\ngpu:\n  verify: {'true' if verify else 'false'}\n"), encoding="utf-8")
    return repo / "clusters" / cluster


def _jobs(cluster_dir: Path) -> list[dict]:
    return [json.loads(json.dumps(e.obj)) for e in render(cluster_dir).objects if e.kind == "Job"]


@pytest.mark.parametrize("cluster", ["gpu-apt-01", "gpu-talos-01"])
def test_the_sample_cuda_pod_as_a_post_sync_job(tmp_path: Path, cluster: str) -> None:
    (job,) = _jobs(_repo(tmp_path, cluster))
    meta = job["metadata"]
    assert (job["apiVersion"], meta["name"], meta["namespace"]) == ("batch/v1", "cuda-smoke", "default")
    assert meta["annotations"] == {"argocd.argoproj.io/hook": "PostSync",
                                   "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation"}
    assert meta["labels"][VERIFY_LABEL] == "true"
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    # W:operations/gpu-container-workloads.md section 3, as written there, the image pinned by digest
    # with the page's tag beside it (issue 32 item 3).
    assert container == {"name": "cuda", "image": "docker.io/nvidia/cuda:12.4.1-base-ubuntu22.04@sha256:"
                         "8767a245ed2c481eb245d8f6c625accc3788e1fb8612403d6b4cd4645a4f09c7",
                         "command": ["nvidia-smi"], "resources": {"limits": {"nvidia.com/gpu": 1}}}
    assert pod["restartPolicy"] == "OnFailure"
    # Both routes that render it need the nvidia RuntimeClass (the documented containerd setup does not
    # make nvidia the default runtime; Talos never does), and GPU nodes may carry the GPU taint.
    assert pod["runtimeClassName"] == "nvidia"
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def test_absent_unless_asked_for(tmp_path: Path) -> None:
    assert _jobs(_repo(tmp_path, "gpu-apt-01", verify=False)) == []
    assert _jobs(OVERLAYS / "clusters" / "gpu-apt-01") == []


@pytest.mark.parametrize("cluster", ["gpu-passthrough-01", "vgpu-apt-01"])
def test_refused_on_the_vm_routes(tmp_path: Path, cluster: str) -> None:
    with pytest.raises(RenderError) as caught:
        render(_repo(tmp_path, cluster))
    (finding,) = caught.value.findings
    assert finding.code == "OVL-GPU" and "only gpu.variant: container advertises it" in finding.message
    assert finding.location is not None and finding.location.line > 0


def test_the_job_is_validated_against_its_schema() -> None:
    assert ("batch/v1", "Job") in CORE_KINDS
    from renderer.check.schemas.validator import BuiltinValidator

    validator = BuiltinValidator()
    (job,) = [d for d in YAML(typ="safe").load_all(VARIANT_FILE.read_text(encoding="utf-8")) if d]
    assert validator.has_schema(job) and validator.errors(job) == []
    broken = json.loads(json.dumps(job))
    broken["spec"]["backoffLimit"] = "two"
    assert [e.pointer for e in validator.errors(broken)] == ["/spec/backoffLimit"]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the real `kubectl kustomize` build is skipped")
def test_kustomize_builds_it_and_the_flux_split(cli, tmp_path: Path) -> None:
    cluster = _repo(tmp_path, "gpu-apt-01")
    rendered = tmp_path / "rendered" / "gpu-apt-01"
    assert cli("render", str(cluster), "--out", str(rendered))[0] == 0
    built = {}
    # README "Verify a GPU cluster": the cluster's Kustomization leaves the Job out, a second one
    # (dependsOn the first, wait: true) applies only it.
    for name, selector in {"cluster": f"{VERIFY_LABEL}=true", "verify": f"!{VERIFY_LABEL}"}.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources: [../rendered/gpu-apt-01]\npatches:\n  - target: {{labelSelector: \"{selector}\"}}\n"
            "    patch: |\n      $patch: delete\n      apiVersion: v1\n      kind: Any\n"
            "      metadata:\n        name: any\n", encoding="utf-8")
        result = subprocess.run([KUBECTL, "kustomize", str(folder)], capture_output=True, text=True, timeout=60,
                                check=False)
        assert result.returncode == 0, result.stderr
        built[name] = [d for d in YAML(typ="safe").load_all(result.stdout) if d]
    assert [d["kind"] for d in built["verify"]] == ["Job"]
    assert "Job" not in [d["kind"] for d in built["cluster"]] and len(built["cluster"]) >= 4
