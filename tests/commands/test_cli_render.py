"""`cozy-render render`: stdout stream, JSON, --out directories, --check, --all, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import OVERLAYS, REPO

SAMPLE = str(OVERLAYS / "clusters" / "gpu-apt-01")
HEAD = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"


def test_render_prints_a_yaml_stream_with_our_labels(cli) -> None:
    code, out, err = cli("render", SAMPLE)
    assert code == 0, err
    docs = list(YAML(typ="safe").load_all(out))
    assert docs and all(d["metadata"]["labels"]["render.cozystack.io/cluster"] == "gpu-apt-01" for d in docs)
    # Packages the platform release also renders keep Helm's managed-by label; all else carries ours.
    helm_owned = {"cozystack.metallb", "cozystack.networking"}
    for d in docs:
        managed_by = d["metadata"]["labels"].get("app.kubernetes.io/managed-by")
        assert managed_by == (None if d["metadata"]["name"] in helm_owned else "cozy-render"), d["metadata"]
    platform = [d for d in docs if d["metadata"]["name"] == "cozystack.cozystack-platform"]
    assert len(platform) == 1 and "namespace" not in platform[0]["metadata"]


def test_render_is_byte_identical_across_runs_and_processes() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "LC_", "LANG"))}
    outs = set()
    for extra in ({}, {"PYTHONHASHSEED": "1"}, {"PYTHONHASHSEED": "2", "LANG": "C", "TZ": "Asia/Tokyo"}):
        proc = subprocess.run([sys.executable, "-m", "renderer", "render", SAMPLE], capture_output=True, text=True,
                              env={**env, **extra}, cwd=REPO, check=True)
        outs.add(proc.stdout)
    assert len(outs) == 1


def test_json_output_is_the_same_objects(cli) -> None:
    _, yaml_out, _ = cli("render", SAMPLE)
    code, json_out, _ = cli("render", SAMPLE, "-o", "json")
    assert code == 0
    listed = json.loads(json_out)
    assert (listed["apiVersion"], listed["kind"], list(listed)) == ("v1", "List", ["apiVersion", "kind", "items"])
    assert listed["items"] == list(YAML(typ="safe").load_all(yaml_out))


def test_output_format_and_out_are_a_usage_error(cli, tmp_path: Path) -> None:
    for fmt in ("json", "yaml"):
        code, stdout, err = cli("render", SAMPLE, "-o", fmt, "--out", str(tmp_path / "out"))
        assert (code, stdout) == (2, "") and "-o/--output picks the stdout format" in err
    assert not (tmp_path / "out").exists()


def test_out_writes_a_kustomize_directory(cli, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    code, stdout, err = cli("render", SAMPLE, "--out", str(out))
    assert (code, stdout) == (0, ""), err
    kustomization = YAML(typ="safe").load((out / "kustomization.yaml").read_text())
    files = sorted(p.name for p in out.iterdir())
    assert sorted(kustomization["resources"] + ["kustomization.yaml", ".cozy-render"]) == files
    assert "package_cozystack.cozystack-platform.yaml" in files
    _, stream, _ = cli("render", SAMPLE)
    joined = [YAML(typ="safe").load((out / f).read_text()) for f in kustomization["resources"]]
    assert joined == list(YAML(typ="safe").load_all(stream))
    code, _, err = cli("render", SAMPLE, "--out", str(out), "--check")
    assert code == 0, err


def test_check_reports_stale_output(cli, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    cli("render", SAMPLE, "--out", str(out))
    (out / "package_cozystack.metallb.yaml").write_text("stale\n")
    (out / "leftover.yaml").write_text("x\n")
    code, stdout, err = cli("render", SAMPLE, "--out", str(out), "--check")
    assert code == 1 and stdout == ""
    assert "package_cozystack.metallb.yaml: out of date" in err
    assert "leftover.yaml: not rendered any more" in err


def test_failed_render_leaves_out_untouched(cli, repo, tmp_path: Path) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + "metadata: {name: c1}\nhost: {os: nope}\n"
                                              "platform: {variant: default}\n"})
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.yaml").write_text("mine\n")
    code, stdout, err = cli("render", str(root / "clusters/c1"), "--out", str(out))
    assert code == 3 and stdout == ""
    assert "error[OVL-SCHEMA]" in err and "Traceback" not in err
    assert [p.name for p in out.iterdir()] == ["keep.yaml"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_all_renders_one_folder_per_cluster(cli, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    code, _, err = cli("render", "--all", str(OVERLAYS), "--out", str(out))
    assert code == 0, err
    clusters = sorted(p.parent.name for p in (OVERLAYS / "clusters").glob("*/cluster.yaml"))
    assert sorted(p.name for p in out.iterdir()) == clusters
    for name in clusters:
        assert (out / name / "kustomization.yaml").is_file()
    code, _, err = cli("render", "--all", str(OVERLAYS), "--out", str(out), "--check")
    assert code == 0, err


def test_bad_input_exit_code_and_single_line(cli, repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + "metadata: {name: c1}\nhost: {os: apt}\n"
                                              "platform: {variant: default}\ngpu: {variantt: none}\n"})
    code, out, err = cli("render", str(root / "clusters/c1"))
    assert code == 3 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("error[OVL-SCHEMA]: unknown key 'gpu.variantt'; did you mean 'variant'?")


def test_missing_path_is_a_usage_error(cli) -> None:
    code, out, _ = cli("render", "/nonexistent/cluster")
    assert code == 2 and out == ""


def test_render_accepts_the_cluster_file_itself(cli) -> None:
    code_dir, out_dir, _ = cli("render", SAMPLE)
    code_file, out_file, _ = cli("render", SAMPLE + "/cluster.yaml")
    assert (code_dir, code_file) == (0, 0) and out_dir == out_file


def test_internal_errors_exit_4_without_traceback(cli, monkeypatch) -> None:
    import renderer.pipeline

    def boom(*_a, **_k):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(renderer.pipeline, "emit", boom)
    code, out, err = cli("render", SAMPLE)
    assert code == 4 and out == "" and "Traceback" not in err
    assert "internal error: ZeroDivisionError: bug" in err


def test_explain_names_file_and_line(cli, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    code, out, _ = cli("explain", "overlays/clusters/gpu-apt-01", "platform.values.publishing.host")
    assert code == 0
    assert "platform.values.publishing.host = \"gpu-apt-01.example.org\"  # overlays/base/cluster.yaml:13:13" in out


def test_schema_overlay_is_valid_json_schema(cli) -> None:
    import jsonschema

    code, out, _ = cli("schema", "overlay")
    assert code == 0
    jsonschema.Draft7Validator.check_schema(json.loads(out))


@pytest.mark.parametrize("cluster", sorted(p.parent.name for p in (OVERLAYS / "clusters").glob("*/cluster.yaml")))
def test_every_sample_validates_against_the_published_schema(cluster: str) -> None:
    """The published schema (for editors) and the loader agree on every sample layer."""
    import jsonschema

    from renderer.load.overlay_schema import schema

    validator = jsonschema.Draft7Validator(schema())
    doc = YAML(typ="safe").load((OVERLAYS / "clusters" / cluster / "cluster.yaml").read_text())
    partial = dict(doc.items())
    errors = [e.message for e in validator.iter_errors(partial) if e.validator != "required"]
    assert errors == []


def test_kubernetes_version_option(cli) -> None:
    assert cli("render", SAMPLE, "--kubernetes-version", "1.31")[0] == 0
    code, out, err = cli("render", SAMPLE, "-k", "1.2")
    assert code == 2 and out == "" and "no bundled schemas for Kubernetes '1.2'" in err


def test_check_reports_schema_violations(cli, repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + "metadata: {name: c1}\nhost: {os: apt}\n"
                 "platform: {variant: isp-full}\npackages:\n  cozystack.metallb:\n    variant: default\n"
                 "    components: {metallb: {enabled: 'yes'}}\n"})
    code, out, err = cli("check", str(root / "clusters/c1"))
    assert code == 1 and out == ""
    assert "cluster.yaml:9:37: error[SCHEMA]: Package cozystack.metallb: /spec/components/metallb/enabled" in err
    code, out, _ = cli("render", str(root / "clusters/c1"))
    assert code == 3 and out == ""


def test_explain_refuses_odd_keys_cleanly(cli) -> None:
    """Keys are user input: unicode digits, empty parts, huge keys are "not set", never an internal error."""
    for key in ("vlans.²", "vlans.٣", "a..b", ".", "gpu.variant.x", "a." * 5000, "\udcff"):
        code, out, err = cli("explain", str(OVERLAYS / "clusters" / "vgpu-apt-01"), key)
        assert (code, out) == (3, ""), (key, err)
        assert err.count("\n") == 1 and "error[CLI-EXPLAIN]" in err
