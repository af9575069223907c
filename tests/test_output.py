"""Serialisation and the atomic --out writer (renderer/output.py)."""

from __future__ import annotations

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
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["c.yaml"]
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
