"""Provenance of every rendered value (renderer.emit.provenance): explain --rendered, render --annotate."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from renderer.emit import provenance
from tests.conftest import OVERLAYS
from tests.helpers import render

SAMPLES = sorted(p.name for p in (OVERLAYS / "clusters").iterdir() if (p / "cluster.yaml").is_file())
KUBECTL = shutil.which("kubectl")
# Steps that name no file: only what cozy-render itself stamps on every object.
FILELESS = {"label stamped by cozy-render on every object it owns"}


@pytest.fixture
def overlays_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sample tree as the working directory (display paths are relative to it)."""
    copy = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, copy)
    (copy / ".git").mkdir()
    monkeypatch.chdir(copy)
    return copy


def test_the_acceptance_example_names_the_route_and_the_feature(cli, overlays_cwd: Path) -> None:
    code, out, err = cli("explain", "clusters/vgpu-apt-01", "--rendered", "Package/cozystack.cozystack-platform",
                         "/spec/components/platform/values/bundles/iaas/gpuOperatorVariant")
    assert code == 0, err
    assert out == (
        "# Package/cozystack.cozystack-platform\n"
        '/spec/components/platform/values/bundles/iaas/gpuOperatorVariant = "vgpu"\n'
        "    derived by feature gpu (bundle route for gpu.variant: vgpu)\n"
        '    chosen by gpu.variant: "vgpu" at clusters/vgpu-apt-01/cluster.yaml:14:12\n'
    )


def test_the_acceptance_example_as_json(cli, overlays_cwd: Path) -> None:
    code, out, _ = cli("explain", "clusters/vgpu-apt-01", "--rendered", "Package/cozystack.cozystack-platform",
                       "/spec/components/platform/values/bundles/iaas/gpuOperatorVariant", "-o", "json")
    assert code == 0
    (entry,) = json.loads(out)["values"]
    assert entry["value"] == "vgpu"
    route = next(s for s in entry["provenance"] if s["kind"] == "route")
    assert (route["key"], route["value"], route["file"], route["line"], route["column"]) == \
        ("gpu.variant", "vgpu", "clusters/vgpu-apt-01/cluster.yaml", 14, 12)
    assert next(s["kind"] for s in entry["provenance"]) == "feature"


@pytest.mark.parametrize("name", SAMPLES)
def test_every_rendered_value_of_every_sample_has_a_provenance_entry(name: str) -> None:
    result = render(OVERLAYS / "clusters" / name)
    tracer = provenance.Tracer(result)
    for obj in result.objects:
        for path, value in provenance.leaves(obj.obj):
            steps = tracer.trace(obj, path, value)
            where = f"{name}: {obj.ref()} {provenance.to_pointer(path)}"
            assert steps, where
            assert any(s.location is not None for s in steps) or {s.text for s in steps} <= FILELESS, where
            if steps[0].kind == "layer":
                # a value copied from the overlay: the winning layer holds this very value (templates aside)
                winning = [s for s in steps if s.kind == "layer"][-1]
                assert winning.value == value or (isinstance(winning.value, str) and "{{" in winning.value), where


def test_a_value_set_in_two_layers_lists_both_in_order(cli, overlays_cwd: Path) -> None:
    code, out, _ = cli("explain", "clusters/gpu-talos-01", "--rendered", "Package/cozystack.cozystack-platform",
                       "/spec/variant")
    assert code == 0
    assert out.splitlines()[2:] == ["    platform.variant set in base/cluster.yaml:10:12",
                                    "    platform.variant overridden in base/talos.yaml:9:12"]


def test_variant_data_values_name_their_variant_file_line(cli, overlays_cwd: Path) -> None:
    code, out, _ = cli("explain", "clusters/gpu-talos-01", "--rendered", "Package/cozystack.gpu-operator",
                       "/spec/components/gpu-operator/values/gpu-operator/hostPaths/driverInstallDir")
    assert code == 0
    lines = out.splitlines()
    assert lines[2].startswith("    derived by feature gpu")
    assert lines[3].startswith("    variant data variants/gpu/talos-native-package.yaml:")
    assert lines[4] == '    chosen by gpu.variant: "container" at clusters/gpu-talos-01/cluster.yaml:10:12'


def test_template_values_name_the_vars_they_read(cli, overlays_cwd: Path) -> None:
    code, out, _ = cli("explain", "clusters/vgpu-apt-01", "--rendered", "Package/cozystack.cozystack-platform",
                       "/spec/components/platform/values/publishing/host")
    assert code == 0
    assert "template reads vars.domain = 'vgpu-apt-01.example.org' at clusters/vgpu-apt-01/cluster.yaml:8:11" in out


def test_unknown_object_and_pointer_are_one_line_errors(cli, overlays_cwd: Path) -> None:
    code, out, err = cli("explain", "clusters/vgpu-apt-01", "--rendered", "Package/nope")
    assert (code, out) == (3, "")
    assert "error[CLI-EXPLAIN]: no object Package/nope in the rendered output" in err
    assert len(err.splitlines()) == 1
    code, out, err = cli("explain", "clusters/vgpu-apt-01", "--rendered", "Package/cozystack.cozystack-platform",
                         "/spec/nope")
    assert (code, out) == (3, "")
    assert "has no value at /spec/nope" in err


def test_explain_of_a_derived_key_points_at_rendered(cli, overlays_cwd: Path) -> None:
    code, _, err = cli("explain", "clusters/vgpu-apt-01", "bundles.iaas.gpuOperatorVariant")
    assert code == 3
    assert "use --rendered" in err


def test_explain_overlay_keys_as_json(cli, overlays_cwd: Path) -> None:
    code, out, _ = cli("explain", "clusters/vgpu-apt-01", "gpu.variant", "-o", "json")
    assert code == 0
    assert json.loads(out)["values"] == [{"key": "gpu.variant", "pointer": "/gpu/variant", "value": "vgpu",
                                          "file": "clusters/vgpu-apt-01/cluster.yaml", "line": 14, "column": 12}]


def test_explain_takes_back_the_keys_it_prints(cli, overlays_cwd: Path) -> None:
    """Issue 23: Package names hold dots; explain prints such a part quoted and takes it back, and takes
    the JSON pointer it prints too."""
    code, out, _ = cli("explain", "clusters/gpu-apt-01", "-o", "json")
    assert code == 0
    values = json.loads(out)["values"]
    dotted = next(v for v in values if v["key"].startswith('packages."cozystack.metallb".'))
    for key in (dotted["key"], dotted["pointer"]):
        code, again, err = cli("explain", "clusters/gpu-apt-01", key, "-o", "json")
        assert code == 0, err
        assert json.loads(again)["values"][0] == dotted
    code, _, err = cli("explain", "clusters/gpu-apt-01", 'packages."cozystack.metallb')
    assert code == 2 and "unterminated" in err


@pytest.mark.parametrize("name", SAMPLES)
def test_annotate_adds_one_comment_per_value_line_and_nothing_else(cli, overlays_cwd: Path, name: str) -> None:
    _, plain, _ = cli("render", f"clusters/{name}")
    code, annotated, err = cli("render", "--annotate", f"clusters/{name}")
    assert code == 0, err
    plain_lines, annotated_lines = plain.split("\n"), annotated.split("\n")
    assert len(plain_lines) == len(annotated_lines)
    commented = 0
    for before, after in zip(plain_lines, annotated_lines, strict=True):
        assert after == before or (after.startswith(before + "  # ") and "\n" not in after), after
        commented += after != before
    values = sum(len(provenance.leaves(o.obj)) for o in render(OVERLAYS / "clusters" / name).objects)
    assert commented == values


def test_annotate_comment_names_the_winning_line(cli, overlays_cwd: Path) -> None:
    _, annotated, _ = cli("render", "--annotate", "clusters/vgpu-apt-01")
    assert "  variant: isp-full-generic  # base/cluster.yaml:10\n" in annotated
    assert "gpuOperatorVariant: vgpu  # clusters/vgpu-apt-01/cluster.yaml:14\n" in annotated


def test_annotate_json_is_every_value_with_its_chain(cli, overlays_cwd: Path) -> None:
    code, out, _ = cli("render", "--annotate", "-o", "json", "clusters/vlan-apt-01")
    assert code == 0
    values = json.loads(out)["values"]
    assert values and all(v["provenance"] for v in values)
    nad = [v for v in values if v["object"] == "NetworkAttachmentDefinition/tenant-prod/vlan200"
           and v["pointer"] == "/spec/config"]
    assert [s["kind"] for s in nad[0]["provenance"]] == ["feature", "variant", "route"]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the real `kubectl kustomize` read is skipped")
@pytest.mark.parametrize("name", SAMPLES)
def test_kubectl_kustomize_reads_the_annotated_stream_the_same(cli, overlays_cwd: Path, tmp_path: Path,
                                                                name: str) -> None:
    builds = []
    for flags in ([], ["--annotate"]):
        _, stream, _ = cli("render", *flags, f"clusters/{name}")
        folder = tmp_path / f"k{len(builds)}"
        folder.mkdir()
        (folder / "stream.yaml").write_text(stream, encoding="utf-8")
        (folder / "kustomization.yaml").write_text("resources: [stream.yaml]\n", encoding="utf-8")
        proc = subprocess.run([str(KUBECTL), "kustomize", str(folder)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        builds.append(proc.stdout)
    assert builds[0] == builds[1]


def test_pointer_escapes_round_trip() -> None:
    obj = {"metadata": {"labels": {"app.kubernetes.io/name": "x", "a~b": "y"}}, "items": [1, 2]}
    for path in (("metadata", "labels", "app.kubernetes.io/name"), ("metadata", "labels", "a~b"), ("items", 1)):
        assert provenance.from_pointer(obj, provenance.to_pointer(path)) == path
    assert provenance.from_pointer(obj, "/items/7") is None


def test_annotate_all_comments_every_cluster(cli, overlays_cwd: Path) -> None:
    _, plain, _ = cli("render", ".", "--all")
    code, annotated, err = cli("render", ".", "--all", "--annotate")
    assert code == 0, err
    changed = [a for p, a in zip(plain.split("\n"), annotated.split("\n"), strict=True) if p != a]
    assert changed and all("  # " in line for line in changed)
    assert "# clusters/vlan-talos-01/cluster.yaml:" in annotated


def test_a_pointer_without_rendered_is_a_usage_error(cli, overlays_cwd: Path) -> None:
    code, out, err = cli("explain", "clusters/vgpu-apt-01", "gpu", "/variant")
    assert (code, out) == (2, "")
    assert "POINTER needs --rendered" in err


def test_an_owned_networking_value_names_the_configmap_entry_that_won(cli, overlays_cwd: Path) -> None:
    cluster = overlays_cwd / "clusters" / "hubble-generic-01" / "cluster.yaml"
    cluster.write_text(cluster.read_text(encoding="utf-8")
                       + "  clusterConfigMap:\n    ipv4-pod-cidr: 10.200.0.0/16\n", encoding="utf-8")
    code, out, err = cli("explain", "clusters/hubble-generic-01", "--rendered", "Package/cozystack.networking",
                         "/spec/components/kubeovn/values/kube-ovn/ipv4/POD_CIDR")
    assert code == 0, err
    assert out.splitlines()[1:] == [
        '/spec/components/kubeovn/values/kube-ovn/ipv4/POD_CIDR = "10.200.0.0/16"',
        "    hubble.clusterConfigMap.ipv4-pod-cidr set in clusters/hubble-generic-01/cluster.yaml:20:20",
        "    forwarded by feature hubble (ConfigMap cozy-system/cozystack ipv4-pod-cidr, read first)",
    ]
    code, out, _ = cli("explain", "clusters/hubble-generic-01", "--rendered", "Package/cozystack.networking",
                       "/spec/components/kubeovn/values/kube-ovn/ipv4/SVC_CIDR")
    assert "platform.values.networking.serviceCIDR set in base/cluster.yaml:19:20" in out


def test_a_manifest_file_value_names_its_line_and_the_entry_that_listed_it(cli, overlays_cwd: Path) -> None:
    code, out, _ = cli("explain", "clusters/gpu-apt-01", "--rendered", "Namespace/tenant-example", "/metadata/name")
    assert code == 0
    assert out.splitlines()[2:] == ["    manifest file extra/namespace.yaml:4:9",
                                    "    listed in manifests[0] at clusters/gpu-apt-01/cluster.yaml:29:5"]


def test_annotate_never_corrupts_strings_longer_than_the_emitter_width(repo, cli) -> None:
    """issue 25 item 7: a string over 4,096 characters is folded over several lines; the comment goes
    after its last line, so the annotated stream reads as the same objects."""
    import yaml

    words, solid, tricky = "word " * 1200, "x" * 5000, "it's: # x " + "y " * 2500
    root = repo({"clusters/c1/cluster.yaml": (
        "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"
        "host: {os: apt}\nplatform: {variant: isp-full-generic}\nmanifests:\n"
        f"  - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: m}}, data: "
        f"{{a: \"{words}\", b: \"{solid}\", c: \"{tricky}\"}}}}\n")})
    code, plain, err = cli("render", str(root / "clusters" / "c1"))
    assert code == 0, err
    code, annotated, err = cli("render", str(root / "clusters" / "c1"), "--annotate")
    assert code == 0, err
    assert list(yaml.safe_load_all(annotated)) == list(yaml.safe_load_all(plain))
    assert "# clusters/c1/cluster.yaml:7" in annotated or "cluster.yaml:7" in annotated


def test_stamped_labels_have_one_origin_on_every_object(cli, overlays_cwd: Path) -> None:
    """Issue 23: a manifests: file's object does not "set" the labels cozy-render stamps on it."""
    code, out, err = cli("explain", "clusters/gpu-apt-01", "--rendered", "-o", "json")
    assert code == 0, err
    origins: dict[str, set[str]] = {}
    for value in json.loads(out)["values"]:
        if value["pointer"].startswith("/metadata/labels/app.kubernetes.io~1managed-by"):
            origins.setdefault(value["pointer"], set()).add(value["provenance"][0]["text"])
    assert origins and all(texts == {"label stamped by cozy-render on every object it owns"}
                           for texts in origins.values()), origins
