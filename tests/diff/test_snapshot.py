"""diff --snapshot and --against: the acceptance bullets of issue 9 that need no API server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.diff.helpers import DATA, case_repo, cozy, live_copy, overlays_repo, render_objects, write_list
from tests.kubefake import realistic


@pytest.fixture
def vlan(tmp_path: Path) -> Path:
    return overlays_repo(tmp_path) / "clusters" / "vlan-apt-01"


@pytest.fixture
def hubble(tmp_path: Path) -> Path:
    return case_repo(tmp_path, "hubble-patch") / "clusters" / "hubble-patch"


def test_realistic_dump_of_the_render_shows_no_differences(vlan: Path) -> None:
    result = cozy("diff", vlan, "--snapshot", DATA / "vlan-apt-01-live.yaml")
    assert result.code == 0, result
    assert result.stdout.splitlines() == [
        "unchanged             Package cozystack.cozystack-platform",
        "unchanged             NetworkAttachmentDefinition tenant-example/vlan100",
        "unchanged             NetworkAttachmentDefinition tenant-prod/vlan100",
        "unchanged             NetworkAttachmentDefinition tenant-prod/vlan200",
        "vlan-apt-01: 0 to create, 0 to change, 4 unchanged, 0 orphaned",
    ]
    assert result.stderr == ""


@pytest.mark.parametrize("shape", ["list-yaml", "list-json", "multi-doc", "single-files", "json-stream"])
def test_snapshot_shapes_kubectl_writes(vlan: Path, tmp_path: Path, shape: str) -> None:
    live = live_copy(render_objects(vlan))
    snap = tmp_path / "snap"
    snap.mkdir()
    if shape == "list-yaml":
        write_list(snap / "all.yaml", live)
    elif shape == "list-json":
        write_list(snap / "all.json", live, "json")
    elif shape == "multi-doc":
        (snap / "all.yaml").write_text(yaml.safe_dump_all(live))
    elif shape == "single-files":
        for i, obj in enumerate(live):
            (snap / f"{i}.json").write_text(json.dumps(obj, indent=4))
    else:
        (snap / "stream.json").write_text("\n".join(json.dumps(o, indent=2) for o in live))
    result = cozy("diff", vlan, "--snapshot", snap)
    assert result.code == 0, result
    assert "0 to create, 0 to change, 4 unchanged, 0 orphaned" in result.stdout


def test_one_overlay_change_shows_exactly_that_change(vlan: Path, tmp_path: Path) -> None:
    snap = write_list(tmp_path / "live.yaml", live_copy(render_objects(vlan)))
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text().replace("hostAddress: 203.0.113.2/24}",
                                                   "hostAddress: 203.0.113.2/24, mtu: 9000}"))
    result = cozy("diff", vlan, "--snapshot", snap)
    assert result.code == 1, result
    changed = [line for line in result.stdout.splitlines() if line.startswith(("+", "-"))
               and not line.startswith(("+++", "---"))]
    assert result.stdout.count("to change ") == 2  # vlan100 in both of its namespaces
    assert all('"mtu": 9000' in line for line in changed if line.startswith("+")), changed
    assert all('"mtu"' not in line for line in changed if line.startswith("-")), changed
    assert "vlan-apt-01: 0 to create, 2 to change, 2 unchanged, 0 orphaned" in result.stdout


def test_json_output_lists_changed_paths_with_old_and_new(vlan: Path, tmp_path: Path) -> None:
    live = live_copy(render_objects(vlan))
    live[0]["spec"]["components"]["platform"]["values"]["networking"]["podCIDR"] = "10.0.0.0/16"
    snap = write_list(tmp_path / "live.yaml", live)
    result = cozy("diff", vlan, "--snapshot", snap, "-o", "json")
    assert result.code == 1
    data = json.loads(result.stdout)
    (cluster,) = data["clusters"]
    platform = cluster["objects"][0]
    assert platform["status"] == "change"
    assert platform["changes"] == [{"path": "/spec/components/platform/values/networking/podCIDR",
                                    "type": "values_changed", "old": "10.0.0.0/16", "new": "10.244.0.0/16"}]
    assert cluster["summary"] == {"create": 0, "change": 1, "unchanged": 3, "orphaned": 0, "skipped": 0,
                                  "patch-target-missing": 0}


def test_deleting_a_vlan_shows_its_nads_as_orphans(vlan: Path, tmp_path: Path) -> None:
    snap = write_list(tmp_path / "live.yaml", live_copy(render_objects(vlan)))
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text().split("  - {name: vlan200")[0])
    result = cozy("diff", vlan, "--snapshot", snap)
    assert result.code == 1, result
    assert "orphaned              NetworkAttachmentDefinition tenant-prod/vlan200" in result.stdout
    assert "0 to create, 0 to change, 3 unchanged, 1 orphaned" in result.stdout


def test_deleting_every_vlan_still_finds_the_nads(vlan: Path, tmp_path: Path) -> None:
    snap = write_list(tmp_path / "live.yaml", live_copy(render_objects(vlan)))
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text().split("vlans:")[0])
    result = cozy("diff", vlan, "--snapshot", snap)
    assert result.code == 1
    assert result.stdout.count("orphaned ") == 3


def test_retired_package_kept_by_resource_policy_shows_plt09(vlan: Path, tmp_path: Path) -> None:
    live = live_copy(render_objects(vlan))
    retired = realistic({"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                         "metadata": {"name": "cozystack.external-dns",
                                      "labels": {"render.cozystack.io/cluster": "vlan-apt-01"},
                                      "annotations": {"helm.sh/resource-policy": "keep"}},
                         "spec": {"variant": "default"}})
    snap = write_list(tmp_path / "live.yaml", [*live, retired])
    result = cozy("diff", vlan, "--snapshot", snap)
    assert result.code == 1
    assert "orphaned              Package cozystack.external-dns" in result.stdout
    assert result.stderr == ("warning[PLT-09]: cozystack.external-dns is no longer rendered but stays installed "
                             "(resource-policy keep); delete the Package CR to uninstall.\n")


def test_objects_of_other_clusters_or_no_cluster_are_not_orphans(vlan: Path, tmp_path: Path) -> None:
    live = live_copy(render_objects(vlan))
    other = realistic({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "x", "namespace": "a", "labels": {"render.cozystack.io/cluster": "other"}}})
    plain = realistic({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y", "namespace": "a"}})
    owned = realistic({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "z", "namespace": "a", "labels": {"render.cozystack.io/cluster": "vlan-apt-01"},
                                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d",
                                                         "uid": "u"}]}})
    snap = write_list(tmp_path / "live.yaml", [*live, other, plain, owned])
    assert cozy("diff", vlan, "--snapshot", snap).code == 0


def test_patch_compares_only_cilium_hubble_and_ignores_platform_keys(hubble: Path, tmp_path: Path) -> None:
    live = live_copy(render_objects(hubble))
    networking = live[1]
    assert networking["spec"]["variant"] == "kubeovn-cilium-generic"  # the platform's own keys are there
    snap = write_list(tmp_path / "live.yaml", live)
    result = cozy("diff", hubble, "--snapshot", snap)
    assert result.code == 0, result
    # The platform changes its own keys: still no drift for the patch.
    cilium = networking["spec"]["components"]["cilium"]["values"]["cilium"]
    cilium["k8sServiceHost"] = "api.elsewhere.example.org"
    networking["spec"]["variant"] = "kubeovn-cilium"
    networking["metadata"]["labels"]["extra"] = "platform"
    write_list(snap, live)
    assert cozy("diff", hubble, "--snapshot", snap).code == 0
    # Our key changes: drift, and only that.
    cilium["hubble"]["relay"]["enabled"] = False
    write_list(snap, live)
    result = cozy("diff", hubble, "--snapshot", snap, "-o", "json")
    assert result.code == 1
    objects = json.loads(result.stdout)["clusters"][0]["objects"]
    assert objects[1]["changes"] == [{"path": "/spec/components/cilium/values/cilium/hubble/relay/enabled",
                                      "type": "values_changed", "old": False, "new": True}]


def test_patch_target_missing_is_plt11_never_to_create(hubble: Path, tmp_path: Path) -> None:
    live = [o for o in live_copy(render_objects(hubble)) if o["metadata"]["name"] != "cozystack.networking"]
    snap = write_list(tmp_path / "live.yaml", live)
    result = cozy("diff", hubble, "--snapshot", snap)
    assert result.code == 3, result
    assert "patch target missing  Package cozystack.networking" in result.stdout
    assert "to create" not in result.stdout.replace("0 to create", "")
    assert "error[PLT-11]: Package cozystack.networking: the live object this patch is for does not exist" \
        in result.stderr
    assert "VariantNotFound" in result.stderr
    assert "fails" not in result.stderr  # the 2026-12 erratum: not a failed Helm release


def test_new_object_is_to_create(vlan: Path, tmp_path: Path) -> None:
    live = [o for o in live_copy(render_objects(vlan)) if o["metadata"]["name"] != "vlan200"]
    result = cozy("diff", vlan, "--snapshot", write_list(tmp_path / "live.yaml", live))
    assert result.code == 1
    assert "to create             NetworkAttachmentDefinition tenant-prod/vlan200" in result.stdout
    assert "+kind: NetworkAttachmentDefinition" in result.stdout


def _with_secret(cluster_dir: Path, value: str) -> None:
    cluster = cluster_dir / "cluster.yaml"
    cluster.write_text(cluster.read_text().split("\nmanifests:")[0] + f"""
manifests:
  - apiVersion: v1
    kind: Secret
    metadata: {{name: backup-creds, namespace: cozy-system}}
    stringData: {{password: {value}, user: admin}}
""")


def test_changed_secret_shows_masks_never_the_value(vlan: Path, tmp_path: Path) -> None:
    _with_secret(vlan, "hunter2-old")
    live = live_copy(render_objects(vlan))
    secret = next(o for o in live if o["kind"] == "Secret")
    import base64

    secret["data"] = {k: base64.b64encode(v.encode()).decode() for k, v in secret.pop("stringData").items()}
    secret["type"] = "Opaque"
    secret["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(
        {"stringData": {"password": "hunter2-old"}})}
    snap = write_list(tmp_path / "live.yaml", live)
    assert cozy("diff", vlan, "--snapshot", snap).code == 0
    _with_secret(vlan, "s3cret-new")
    for fmt in ("text", "json"):
        result = cozy("diff", vlan, "--snapshot", snap, "-o", fmt)
        assert result.code == 1
        for leaked in ("hunter2", "s3cret", "aHVudGVy", "czNjcmV0", "YWRtaW4="):
            assert leaked not in result.stdout + result.stderr
    text = cozy("diff", vlan, "--snapshot", snap).stdout
    assert "-  password: '*** (before)'" in text
    assert "+  password: '*** (after)'" in text
    assert "   user: '***'" in text
    shown = cozy("diff", vlan, "--snapshot", snap, "--show-secrets").stdout
    assert base64.b64encode(b"s3cret-new").decode() in shown


@pytest.mark.parametrize("ignore", ["/spec/config", "NetworkAttachmentDefinition:/spec/config",
                                    "NetworkAttachmentDefinition/vlan100:/spec/config",
                                    "NetworkAttachmentDefinition/tenant-prod/*:/spec/config"])
def test_ignore_pointers_scoped_by_kind_and_name(vlan: Path, tmp_path: Path, ignore: str) -> None:
    live = live_copy(render_objects(vlan))
    for obj in live:
        if obj["kind"] == "NetworkAttachmentDefinition" and obj["metadata"]["namespace"] == "tenant-prod" \
                and obj["metadata"]["name"] == "vlan100":
            obj["spec"]["config"] = "{}"
    snap = write_list(tmp_path / "live.yaml", live)
    assert cozy("diff", vlan, "--snapshot", snap).code == 1
    assert cozy("diff", vlan, "--snapshot", snap, "--ignore", ignore).code == 0


def test_ignore_scope_that_does_not_match_keeps_the_change(vlan: Path, tmp_path: Path) -> None:
    live = live_copy(render_objects(vlan))
    live[1]["spec"]["config"] = "{}"
    snap = write_list(tmp_path / "live.yaml", live)
    assert cozy("diff", vlan, "--snapshot", snap, "--ignore", "Package:/spec/config").code == 1
    assert cozy("diff", vlan, "--snapshot", snap, "--ignore", "NetworkAttachmentDefinition/other:/spec/config").code == 1


def test_overlay_diff_ignore_is_layered(tmp_path: Path) -> None:
    repo = overlays_repo(tmp_path)
    vlan = repo / "clusters" / "vlan-apt-01"
    live = live_copy(render_objects(vlan))
    live[0]["spec"]["components"]["platform"]["values"]["publishing"]["host"] = "changed.example.org"
    live[1]["spec"]["config"] = "{}"
    snap = write_list(tmp_path / "live.yaml", live)
    base = repo / "base" / "cluster.yaml"
    base.write_text(base.read_text() + "diff:\n  ignore: [/spec/components/platform/values/publishing/host]\n")
    result = cozy("diff", vlan, "--snapshot", snap)
    assert result.code == 1 and "1 to change" in result.stdout  # only the NAD is left
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text() + "diff:\n  ignore+: ['NetworkAttachmentDefinition:/spec/config']\n")
    assert cozy("diff", vlan, "--snapshot", snap).code == 0


@pytest.mark.parametrize("bad", ["spec/replicas", "Kind/a/b/c:/x", "/"])
def test_malformed_ignore_is_an_error(vlan: Path, bad: str) -> None:
    result = cozy("diff", vlan, "--snapshot", DATA / "vlan-apt-01-live.yaml", "--ignore", bad)
    assert result.code == 3
    assert result.stderr.startswith("error[DIFF-IGNORE]: --ignore:")
    assert result.stdout == ""


@pytest.mark.parametrize("annotation", ["kustomize.toolkit.fluxcd.io/reconcile: disabled",
                                        "kustomize.toolkit.fluxcd.io/ssa: Ignore"])
def test_flux_opt_outs_are_reported_as_skipped(vlan: Path, tmp_path: Path, annotation: str) -> None:
    live = live_copy(render_objects(vlan))
    key, value = annotation.split(": ")
    live[1]["metadata"]["annotations"] = {key: value}
    live[1]["spec"]["config"] = "{}"
    result = cozy("diff", vlan, "--snapshot", write_list(tmp_path / "live.yaml", live))
    assert result.code == 0, result
    assert f"skipped               NetworkAttachmentDefinition tenant-example/vlan100  ({annotation})" \
        in result.stdout
    assert result.stdout.rstrip().endswith("0 to create, 0 to change, 3 unchanged, 0 orphaned, 1 skipped")


def test_exit_zero_keeps_the_report(vlan: Path, tmp_path: Path) -> None:
    live = live_copy(render_objects(vlan))[:-1]
    result = cozy("diff", vlan, "--snapshot", write_list(tmp_path / "live.yaml", live), "--exit-zero")
    assert result.code == 0
    assert "1 to create" in result.stdout


@pytest.mark.parametrize("content, where", [
    ("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a\n", "snap.yaml:"),
    ('{"apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"na', "snap.json:1:"),
    ("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n", "snap.yaml:"),
    ("- just\n- a list\n", "snap.yaml:1:1"),
])
def test_truncated_or_malformed_snapshot_is_an_error_naming_the_file(vlan: Path, tmp_path: Path, content: str,
                                                                      where: str) -> None:
    name = "snap.json" if content.startswith("{") else "snap.yaml"
    snap = tmp_path / name
    snap.write_text(content)
    result = cozy("diff", vlan, "--snapshot", snap)
    assert result.code == 3, result
    assert result.stdout == ""
    assert where in result.stderr and "error[DIFF-SNAPSHOT]" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_the_same_object_twice_in_a_snapshot_is_an_error(vlan: Path, tmp_path: Path) -> None:
    live = live_copy(render_objects(vlan))
    result = cozy("diff", vlan, "--snapshot", write_list(tmp_path / "live.yaml", [*live, json.loads(json.dumps(live[0]))]))
    assert result.code == 3
    assert "appears twice" in result.stderr


def test_against_a_committed_render_out_folder(vlan: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert cozy("render", vlan, "--out", out).code == 0
    assert cozy("diff", vlan, "--against", out).code == 0
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text().split("  - {name: vlan200")[0]
                       .replace("hostAddress: 203.0.113.2/24}", "hostAddress: 203.0.113.2/24, mtu: 9000}"))
    result = cozy("diff", vlan, "--against", out)
    assert result.code == 1
    assert "0 to create, 2 to change, 1 unchanged, 1 orphaned" in result.stdout


def test_against_compares_patches_whole(hubble: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert cozy("render", hubble, "--out", out).code == 0
    assert cozy("diff", hubble, "--against", out).code == 0  # no live platform object needed: no PLT-11


def test_all_with_per_cluster_snapshots(tmp_path: Path) -> None:
    repo = overlays_repo(tmp_path)
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    for cluster in sorted((repo / "clusters").iterdir()):
        write_list(snaps / f"{cluster.name}.yaml", live_copy(render_objects(cluster)))
    result = cozy("diff", repo, "--all", "--snapshot", snaps)
    assert result.code == 0, result
    assert result.stdout.count("# cluster ") == len(list((repo / "clusters").iterdir()))
    (snaps / "vlan-apt-01.yaml").unlink()
    result = cozy("diff", repo, "--all", "--snapshot", snaps)
    assert result.code == 3
    assert "nothing for cluster vlan-apt-01" in result.stderr


def test_render_errors_stop_the_diff(vlan: Path) -> None:
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text() + "bogus: 1\n")
    result = cozy("diff", vlan, "--snapshot", DATA / "vlan-apt-01-live.yaml")
    assert result.code == 3
    assert "error[OVL-SCHEMA]" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("args", [["--snapshot", "S", "--against", "D"], ["--snapshot", "S", "--server-side"],
                                  ["--snapshot", "S", "--context", "c"]])
def test_contradicting_options_are_usage_errors(vlan: Path, tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "D").mkdir()
    shutil.copy(DATA / "vlan-apt-01-live.yaml", tmp_path / "S")
    args = [str(tmp_path / a) if a in ("S", "D") else a for a in args]
    result = cozy("diff", vlan, *args)
    assert result.code == 2
    assert "error[DIFF-USAGE]" in result.stderr


def test_object_rendered_without_a_namespace_matches_default(vlan: Path, tmp_path: Path) -> None:
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text() + """
manifests:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: plain}, data: {a: b}}
""")
    live = live_copy(render_objects(vlan))
    for obj in live:
        if obj["kind"] == "ConfigMap":
            obj["metadata"]["namespace"] = "default"
    result = cozy("diff", vlan, "--snapshot", write_list(tmp_path / "live.yaml", live))
    assert result.code == 0, result
    assert "unchanged             ConfigMap plain" in result.stdout


def test_malformed_overlay_ignore_points_at_the_overlay_line(vlan: Path) -> None:
    cluster = vlan / "cluster.yaml"
    cluster.write_text(cluster.read_text() + "diff:\n  ignore: [/spec/config, spec/config]\n")
    result = cozy("diff", vlan, "--snapshot", DATA / "vlan-apt-01-live.yaml")
    assert result.code == 3
    from renderer.load.yamlio import display_path

    assert result.stderr.startswith(f"{display_path(cluster)}:")
    assert "error[DIFF-IGNORE]: diff.ignore: 'spec/config' is not a JSON pointer" in result.stderr


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_every_truncation_of_a_list_dump_is_an_error(vlan: Path, tmp_path: Path, fmt: str) -> None:
    """A kubectl List ends with `kind: List` (YAML, keys sorted) or a closing brace (JSON): a dump cut
    anywhere before that is refused, never read as fewer objects."""
    full = write_list(tmp_path / f"full.{fmt}", live_copy(render_objects(vlan)), fmt).read_text()
    end = full.index("kind: List") if fmt == "yaml" else len(full.rstrip()) - 1
    cut = tmp_path / f"cut.{fmt}"
    import io

    from renderer.diff import DiffRequest, run
    from renderer.errors import RenderError

    for position in range(1, end, max(1, end // 25)):
        cut.write_text(full[:position])
        with pytest.raises(RenderError) as caught:
            run(DiffRequest(vlan, snapshot=cut), stdout=io.StringIO(), stderr=io.StringIO())
        (finding,) = caught.value.findings
        assert finding.code == "DIFF-SNAPSHOT", (position, finding)


def test_plt11_is_worded_by_the_variant_a_created_patch_would_get(tmp_path: Path) -> None:
    """Erratum 2026-12: a patch that creates its Package resolves to variant `default` until the platform
    release adopts it. No `default` in the source: VariantNotFound; another platform variant: the wrong
    one runs meanwhile (both errors); `default` is the platform's too: only the ordering (a warning)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cluster = repo / "clusters" / "c1"
    cluster.mkdir(parents=True)
    (cluster / "cluster.yaml").write_text(
        "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\nhost: {os: apt}\n"
        "platform: {variant: isp-full}\npackages:\n"
        "  cozystack.networking: {components: {cilium: {values: {cilium: {debug: {enabled: true}}}}}}\n"
        "  cozystack.cozystack-scheduler: {components: {}}\n"
        "  cozystack.metallb: {components: {metallb: {values: {speaker: {frr: {enabled: false}}}}}}\n")
    snapshot = write_list(tmp_path / "live.json", [], "json")
    result = cozy("diff", cluster, "--snapshot", snapshot)
    assert result.code > 1, result
    lines = {line.split("Package ")[1].split(":")[0]: line for line in result.stderr.splitlines() if "PLT-11" in line}
    assert lines["cozystack.networking"].startswith("error[PLT-11]") and "VariantNotFound" in lines["cozystack.networking"]
    assert lines["cozystack.cozystack-scheduler"].startswith("error[PLT-11]")
    assert "instead of the platform's linstor" in lines["cozystack.cozystack-scheduler"]
    assert lines["cozystack.metallb"].startswith("warning[PLT-11]")
    assert "release fails" not in result.stderr


def test_a_symlink_out_of_the_against_folder_is_never_read(vlan: Path, tmp_path: Path) -> None:
    """Issue 25 item 2: a committed link to a file outside the folder is an error naming the link; the
    file's content (here a valid object holding a token) is never printed as "live"."""
    out = tmp_path / "rendered"
    assert cozy("render", vlan, "--out", out).code == 0
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leak, namespace: default}\n"
                       "data: {token: SECRET-TOKEN-42}\n")
    link = next(out.rglob("*.yaml")).parent / "leak.yaml"
    link.symlink_to(outside)
    for args in (["--against", out], ["--snapshot", out]):
        result = cozy("diff", vlan, *args)
        assert result.code == 3, result
        assert result.stdout == ""
        assert "SECRET-TOKEN" not in result.stderr
        from renderer.load.yamlio import display_path

        assert result.stderr.startswith(f"{display_path(link)}: error[DIFF-SNAPSHOT]: a symlink out of the folder")


def test_a_symlink_inside_the_folder_is_read(vlan: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert cozy("render", vlan, "--out", out).code == 0
    first = sorted(out.rglob("*.yaml"))[-1]
    moved = first.with_suffix(".txt")
    first.rename(moved)
    first.symlink_to(moved.name)
    assert cozy("diff", vlan, "--against", out).code == 0
