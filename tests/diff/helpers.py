"""Shared pieces of the diff tests: copies of sample repositories, realistic live dumps, a CLI runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from renderer.cli import main
from tests.kubefake import realistic

PROJECT = Path(__file__).resolve().parents[2]
CASES = PROJECT / "tests" / "cases"
DATA = Path(__file__).resolve().parent / "data"

# What the platform release itself writes into cozystack.networking on isp-full-generic (reference (b)):
# the keys a Hubble patch must never report as drift.
PLATFORM_NETWORKING_SPEC = {
    "variant": "kubeovn-cilium-generic",
    "components": {
        "kubeovn": {"values": {"kube-ovn": {"ipv4": {"POD_CIDR": "10.244.0.0/16", "POD_GATEWAY": "10.244.0.1",
                                                      "SVC_CIDR": "10.96.0.0/16", "JOIN_CIDR": "100.64.0.0/16"}}}},
        "cilium": {"values": {"cilium": {"k8sServiceHost": "api.example.org", "k8sServicePort": "6443",
                                         "cgroup": {"autoMount": {"enabled": True}},
                                         "gatewayAPI": {"enableAlpn": True}}}},
    },
}


def copy_repo(tmp_path: Path, source: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(source, target)
    (target / ".git").mkdir(exist_ok=True)
    return target


def overlays_repo(tmp_path: Path) -> Path:
    """A copy of the project's sample overlays (base + clusters/*)."""
    return copy_repo(tmp_path, PROJECT / "overlays")


def case_repo(tmp_path: Path, case: str) -> Path:
    return copy_repo(tmp_path, CASES / case / "repo")


def render_objects(cluster_dir: Path) -> list[dict[str, Any]]:
    from tests.helpers import render

    return [json.loads(json.dumps(e.obj)) for e in render(cluster_dir).objects]


def live_copy(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the cluster holds after a sync of ``objects``: server-owned fields everywhere, Helm's
    labels and annotations on Packages the platform release rendered, and for a patch the
    platform's whole object with the patch merged in (server-side apply)."""
    from tests.kubefake import _merge

    out = []
    for obj in objects:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if annotations.get("render.cozystack.io/ownership") == "patch":
            base = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                    "metadata": {"name": obj["metadata"]["name"]}, "spec": PLATFORM_NETWORKING_SPEC}
            out.append(realistic(_merge(base, obj), helm=True))
        elif obj["kind"] == "Package" and "app.kubernetes.io/managed-by" not in (obj["metadata"].get("labels") or {}):
            out.append(realistic(obj, helm=True))
        else:
            out.append(realistic(obj))
    return out


def write_list(path: Path, objects: list[dict[str, Any]], fmt: str = "yaml") -> Path:
    """``kubectl get -o yaml|json`` output of ``objects``: a v1 List."""
    doc = {"apiVersion": "v1", "items": objects, "kind": "List", "metadata": {"resourceVersion": ""}}
    if fmt == "json":
        path.write_text(json.dumps(doc, indent=4) + "\n", encoding="utf-8")
    else:
        # As kubectl writes it (go-yaml v2): a string a YAML 1.1 reader would take for something else
        # (`y`, `on`, `0x1f`) is quoted, which PyYAML's dumper does not do for all of them.
        from renderer.output.yaml import dump_one

        path.write_text(dump_one(doc), encoding="utf-8")
    return path


class Result:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def __repr__(self) -> str:
        return f"Result({self.code}, stdout={self.stdout!r}, stderr={self.stderr!r})"


def cozy(*args: Any, env: dict[str, str] | None = None) -> Result:
    runner = CliRunner()
    result = runner.invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)
    return Result(result.exit_code, result.stdout, result.stderr)


def real_cluster(objects: list[dict[str, Any]], platform_packages: int = 40) -> list[dict[str, Any]]:
    """What a real Cozystack cluster holds after Argo CD synced ``objects`` (issue 18): the API
    server's defaults on every object, managedFields of several managers (Argo CD, helm-controller,
    the operator's status writer), Argo CD's tracking id, the DaemonSet controller's annotation,
    Packages the platform release owns (Helm's labels) and patched by us (co-managed), dozens of
    unlabelled platform Packages, and the operator's status."""
    from tests.kubefake import argo_synced, co_managed, helm_owned, unlabelled_platform_packages

    out = []
    for obj in objects:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if annotations.get("render.cozystack.io/ownership") == "patch":
            name = obj["metadata"]["name"]
            spec = PLATFORM_NETWORKING_SPEC if name == "cozystack.networking" else {"variant": "default"}
            base = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": {"name": name}, "spec": spec}
            out.append(co_managed(base, obj))
        elif obj["kind"] == "Package" and "app.kubernetes.io/managed-by" not in (obj["metadata"].get("labels") or {}):
            out.append(helm_owned(obj))
        else:
            out.append(argo_synced(obj))
    return out + unlabelled_platform_packages(platform_packages)
