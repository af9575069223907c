"""Serialisation and the atomic --out writer (renderer/output/__init__.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from renderer import output
from renderer.errors import RenderError

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}
PKG = {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": {"name": "cozystack.x"}}


def test_file_names() -> None:
    assert output.file_name(CM) == "configmap_ns_a.yaml"
    assert output.file_name(PKG) == "package_cozystack.x.yaml"
    assert output.file_name({"kind": "Weird/Kind", "metadata": {"name": "../../etc"}}) == "weird-kind_etc.yaml"


def test_directory_files_lists_resources_in_order_and_never_collides() -> None:
    twin = {**CM, "metadata": {"name": "a", "namespace": "ns"}}
    files = output.directory_files([PKG, CM, twin])
    assert list(files) == ["package_cozystack.x.yaml", "configmap_ns_a.yaml", "configmap_ns_a-2.yaml",
                           "kustomization.yaml"]
    assert "resources:\n- package_cozystack.x.yaml\n- configmap_ns_a.yaml\n" in files["kustomization.yaml"]


def test_write_tree_replaces_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    output.write_tree(out, {"a.yaml": "1\n", "sub/b.yaml": "2\n"})
    output.write_tree(out, {"c.yaml": "3\n"})
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [output.NODE_MARK, "c.yaml"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_write_tree_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("not a folder")
    with pytest.raises(RenderError) as info:
        output.write_tree(out, {"a.yaml": "1\n"})
    assert "error[OUT-WRITE]" in str(info.value)
    assert out.read_text() == "not a folder" and [p.name for p in tmp_path.iterdir()] == ["out"]


def test_stale_files(tmp_path: Path) -> None:
    files = {"a.yaml": "1\n", "b.yaml": "2\n"}
    output.write_tree(tmp_path / "o", files)
    assert output.stale_files(tmp_path / "o", files) == []
    (tmp_path / "o" / "a.yaml").write_text("x")
    assert output.stale_files(tmp_path / "o", {**files, "c.yaml": "3\n"}) == [
        f"{tmp_path / 'o' / 'a.yaml'}: out of date", f"{tmp_path / 'o' / 'c.yaml'}: missing"]


def test_json_is_a_v1_list() -> None:
    assert json.loads(output.to_json([CM, PKG])) == {"apiVersion": "v1", "kind": "List", "items": [CM, PKG]}
    assert json.loads(output.to_json([]))["items"] == []


KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the real kubectl read of -o json is skipped")
def test_kubectl_reads_render_json_from_stdin(cli, tmp_path: Path) -> None:
    """`kubectl apply --dry-run=client -f -` still asks an API server for discovery (verified with kubectl
    1.32: "unable to recognize STDIN ... connection refused"), so there is no cluster-free apply. `kubectl
    annotate --local -f -` reads stdin through the same resource builder, offline: it accepts the List
    and refuses a bare JSON array ("cannot unmarshal array"), which is exactly the difference that matters."""
    from tests.conftest import OVERLAYS

    code, stdout, _ = cli("render", str(OVERLAYS / "clusters" / "gpu-apt-01"), "-o", "json")
    assert code == 0
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "none")}

    def kubectl_read(text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([KUBECTL, "annotate", "--local", "-f", "-", "checked=yes", "--dry-run=client", "-o",
                               "name"], input=text, capture_output=True, text=True, env=env, timeout=60)

    listed = kubectl_read(stdout)
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    assert len(names) == len(json.loads(stdout)["items"]) and "package.cozystack.io/cozystack.cozystack-platform" \
        in names
    bare = kubectl_read(json.dumps(json.loads(stdout)["items"]))
    assert bare.returncode != 0 and "cannot unmarshal array" in bare.stderr
