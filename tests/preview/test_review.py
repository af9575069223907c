"""``diff --base/--head`` on a real Git repository with two commits (issue 21's acceptance case)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.preview.conftest import SECRET_VALUES, commit_all, git, without_helm, write

HAS_HELM = shutil.which("helm") is not None


def run_json(cli, repo: Path, *args: str) -> tuple[int, dict]:
    code, out, err = cli("diff", "--all", str(repo / "overlays"), "-o", "json", *args)
    assert err == "", err
    return code, json.loads(out)


def by_cluster(data: dict) -> dict[str, dict]:
    return {c["cluster"]: c for c in data["clusters"]}


def changed(cluster: dict, how: str) -> list[dict]:
    """The cluster's findings the change introduced or resolved (without the ``change`` key)."""
    return [{k: v for k, v in f.items() if k != "change"} for f in cluster["findings"] if f["change"] == how]


def objects(cluster: dict) -> dict[str, str]:
    return {f"{o['kind']}/{o['name']}": o["status"] for o in cluster["objects"]}


def test_every_cluster_and_object_has_its_status(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    code, data = run_json(cli, fleet_repo, "--base", "base", "--head", "change")
    assert code == 1
    assert data["base"]["revision"] == "base" and data["head"]["revision"] == "change"
    assert data["head"]["commit"] == git(fleet_repo, "rev-parse", "change").strip()
    clusters = by_cluster(data)
    assert {n: c["status"] for n, c in clusters.items()} == {
        "apt-a": "changed", "apt-bundles": "changed", "apt-gpu": "changed", "apt-secret": "changed",
        "new": "added", "old": "removed", "standalone": "unchanged", "talos-gpu": "changed"}
    # The base-layer edit shows on every cluster it reaches, and they are listed.
    reach = {r["path"]: r["reaches"] for r in data["changed_inputs"]}
    assert reach["overlays/base/cluster.yaml"] == ["apt-a", "apt-bundles", "apt-gpu", "apt-secret", "new",
                                                   "talos-gpu"]
    assert reach["overlays/extra/secret.yaml"] == ["apt-secret"]
    platform_change = {"path": "/spec/components/platform/values/publishing/exposedServices/2", "type": "added",
                       "new": "vm-exportproxy"}
    for name in ("apt-a", "apt-bundles", "apt-gpu", "apt-secret"):
        (platform,) = [o for o in clusters[name]["objects"] if o["name"] == "cozystack.cozystack-platform"]
        assert platform["status"] == "change" and platform_change in platform["changes"], name
    assert objects(clusters["apt-a"]) == {"Package/cozystack.cozystack-platform": "change"}
    # GPU variant change: our standalone container-route Package goes, the bundle route's values come.
    assert objects(clusters["apt-gpu"]) == {"Package/cozystack.cozystack-platform": "change",
                                            "Package/cozystack.gpu-operator": "orphaned"}
    # vgpu on Talos refuses the head's render (GPU-05): nothing syncs there, so nothing is compared (issue 33).
    assert objects(clusters["talos-gpu"]) == {} and clusters["talos-gpu"]["platform"] is None
    assert clusters["talos-gpu"]["head"]["status"] == "refused" and clusters["talos-gpu"]["base"]["status"] == "rendered"
    assert objects(clusters["apt-secret"]) == {"Package/cozystack.cozystack-platform": "change",
                                               "Secret/registry-auth": "change"}
    (secret,) = [o for o in clusters["apt-secret"]["objects"] if o["kind"] == "Secret"]
    assert secret["changes"] == [{"path": "/data/password", "type": "changed", "old": "*** (before)",
                                  "new": "*** (after)"}]
    assert objects(clusters["new"]) == {"Package/cozystack.cozystack-platform": "create"}
    assert objects(clusters["old"]) == {"Package/cozystack.cozystack-platform": "orphaned"}
    # Reads nothing that changed: not rendered at all.
    assert clusters["standalone"]["rendered"] is False and clusters["standalone"]["objects"] == []
    assert data["summary"]["clusters"] == {"added": 1, "removed": 1, "renamed": 0, "changed": 5,
                                               "unchanged": 1}
    assert data["summary"]["rendered"] == {"base": 6, "head": 6}


def test_findings_delta_by_code_location_and_message(cli, fleet_repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    _, data = run_json(cli, fleet_repo, "--base", "base", "--head", "change")
    clusters = by_cluster(data)
    introduced = changed(clusters["talos-gpu"], "introduced")
    gpu05 = [f for f in introduced if f["code"] == "GPU-05"]
    assert gpu05 == [{"cluster": "talos-gpu", "code": "GPU-05", "severity": "error",
                      "message": "vGPU is not supported on Talos (proprietary vGPU Manager cannot be redistributed).",
                      "file": "overlays/clusters/talos-gpu/cluster.yaml", "line": 6, "column": 16}]
    assert changed(clusters["talos-gpu"], "resolved") == []
    assert [f["code"] for f in changed(clusters["apt-gpu"], "resolved")] == ["GPU-10"]
    assert changed(clusters["apt-gpu"], "introduced") == []
    assert data["summary"]["new_errors"] == sum(1 for f in introduced if f["severity"] == "error") >= 1
    # The other way round the same errors are resolved.
    _, back = run_json(cli, fleet_repo, "--base", "change", "--head", "base")
    assert [f["code"] for f in changed(by_cluster(back)["talos-gpu"], "resolved")] == \
        [f["code"] for f in introduced]


def _platform(cluster: dict) -> dict[str, dict]:
    return {p["name"]: p for p in cluster["platform"]["packages"]}


def _check_platform(data: dict, source: str) -> None:
    clusters = by_cluster(data)
    assert data["platform_source"] == source
    bundles = _platform(clusters["apt-bundles"])
    assert bundles == {"cozystack.metallb": {"name": "cozystack.metallb", "status": "removed",
                                             "origin": {"base": "platform", "head": None},
                                             "variant": {"base": "default", "head": None}, "changes": []}}
    gpu = _platform(clusters["apt-gpu"])["cozystack.gpu-operator"]
    assert (gpu["status"], gpu["origin"], gpu["variant"]) == (
        "changed", {"base": "cozy-render", "head": "platform"}, {"base": "container", "head": "default"})
    assert clusters["talos-gpu"]["platform"] is None  # refused at the head (GPU-05): no platform reaction
    assert clusters["apt-a"]["platform"]["packages"] == []  # exposedServices changes no child Package
    assert len(clusters["new"]["platform"]["packages"]) > 50
    assert all(p["status"] == "added" and p["origin"]["head"] == "platform"
               for p in clusters["new"]["platform"]["packages"])
    assert {p["status"] for p in clusters["old"]["platform"]["packages"]} == {"removed"}


@pytest.mark.skipif(not HAS_HELM, reason="no helm on PATH (python .ci/fetch_kubectl.py .ci/bin helm gets one)")
def test_platform_reaction_through_real_helm(cli, fleet_repo: Path) -> None:
    _, data = run_json(cli, fleet_repo, "--base", "base", "--head", "change", "--chart", "helm")
    _check_platform(data, "helm")


def test_platform_reaction_predicted_by_the_model_without_helm(cli, fleet_repo: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    code, out, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "base", "--head", "change")
    assert code == 1 and "predicted by the built-in chart model (no helm)" in out
    _, data = run_json(cli, fleet_repo, "--base", "base", "--head", "change")
    _check_platform(data, "model")


@pytest.mark.parametrize("output", ["text", "json", "markdown"])
def test_the_secret_value_appears_in_no_output(cli, fleet_repo: Path, output: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    without_helm(monkeypatch)
    code, out, err = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "base", "--head", "change",
                         "-o", output, "--color", "always")
    assert code == 1 and "registry-auth" in out
    for value in SECRET_VALUES:
        for form in (value, base64.b64encode(value.encode()).decode()):
            assert form not in out and form not in err, (output, form)
    code, shown, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "base", "--head", "change",
                         "-o", output, "--show-secrets")
    assert any(base64.b64encode(v.encode()).decode() in shown for v in SECRET_VALUES)  # the check can fail


def test_a_secret_value_quoted_by_a_message_is_masked() -> None:
    from renderer.errors import Finding
    from renderer.preview.review import scrub, secret_values

    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "data": {"a": base64_of("hunter22")}, "stringData": {"b": "correct-horse"}}
    values = secret_values([secret])
    (found,) = scrub([Finding("SCHEMA", "got hunter22 and correct-horse and " + base64_of("correct-horse"))], values)
    assert found.message == "got *** and *** and ***"


def base64_of(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


def test_exit_codes_and_fail_on_new_errors(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    overlays = str(fleet_repo / "overlays")
    assert cli("diff", "--all", overlays, "--base", "base", "--head", "change")[0] == 1
    assert cli("diff", "--all", overlays, "--base", "base", "--head", "change", "--exit-zero")[0] == 0
    assert cli("diff", "--all", overlays, "--base", "base", "--head", "change", "--fail-on-new-errors")[0] == 1
    # Going back resolves the errors: changes, but no new error.
    assert cli("diff", "--all", overlays, "--base", "change", "--head", "base", "--fail-on-new-errors")[0] == 0
    assert cli("diff", "--all", overlays, "--base", "change", "--head", "base")[0] == 1
    code, out, err = cli("diff", "--all", overlays, "--base", "change", "--head", "change")
    assert (code, err) == (0, "") and "0 changed" in out


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--head", "change"], 2, "error[DIFF-USAGE]: --head and --fail-on-new-errors review a change: give --base"),
    (["--base", "base", "--snapshot", "SNAP"], 2, "error[DIFF-USAGE]: --snapshot compare with a live cluster"),
    (["--base", "no-such-rev"], 3, "error[DIFF-GIT]: 'no-such-rev' names no commit"),
    (["--base", "--all"], 3, "error[DIFF-GIT]: '--all' is not a revision"),
])
def test_usage_and_git_errors_are_one_line(cli, fleet_repo: Path, args: list[str], code: int, message: str) -> None:
    args = [str(fleet_repo / "README.md") if a == "SNAP" else a for a in args]
    got, out, err = cli("diff", "--all", str(fleet_repo / "overlays"), *args)
    assert got == code and out == ""
    if message:
        assert err.count("\n") == 1 and message in err, err


def test_outside_a_repository_is_refused(cli, tmp_path: Path, samples: Path) -> None:
    shutil.rmtree(samples / ".git")
    code, out, err = cli("diff", "--all", str(samples), "--base", "HEAD")
    assert (code, out) == (3, "") and "error[DIFF-GIT]:" in err and "not inside a Git working tree" in err


def test_markdown_rejected_without_base(cli, fleet_repo: Path) -> None:
    code, _, err = cli("diff", str(fleet_repo / "overlays" / "clusters" / "apt-a"), "-o", "markdown")
    assert code == 2 and "give --base" in err


def test_a_head_that_does_not_render_is_a_new_error(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    path = fleet_repo / "overlays" / "clusters" / "apt-a" / "cluster.yaml"
    path.write_text(path.read_text() + "hubbel: {enabled: true}\n")
    code, data = run_json(cli, fleet_repo, "--base", "change")
    cluster = by_cluster(data)["apt-a"]
    assert code == 1 and cluster["status"] == "changed" and cluster["head"]["status"] == "refused"
    assert cluster["objects"] == [] and [f["code"] for f in cluster["head"]["refused_by"]] == ["OVL-SCHEMA"]
    assert [f["code"] for f in changed(cluster, "introduced")] == ["OVL-SCHEMA"]
    assert cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--fail-on-new-errors")[0] == 1


def test_one_cluster_path(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    code, out, _ = cli("diff", str(fleet_repo / "overlays/clusters/apt-secret/cluster.yaml"), "--base", "base",
                       "-o", "json")
    data = json.loads(out)
    assert code == 1 and [c["cluster"] for c in data["clusters"]] == ["apt-secret"]
    code, out, _ = cli("diff", str(fleet_repo / "overlays/clusters/new"), "--base", "base", "-o", "json")
    assert code == 1 and by_cluster(json.loads(out))["new"]["status"] == "added"


def test_relative_paths_from_a_sub_folder(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    monkeypatch.chdir(fleet_repo / "overlays")
    code, out, _ = cli("diff", "--all", ".", "--base", "base", "-o", "json")
    assert code == 1 and by_cluster(json.loads(out))["old"]["status"] == "removed"


def test_text_is_coloured_only_when_asked(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    overlays = str(fleet_repo / "overlays")
    _, plain, _ = cli("diff", "--all", overlays, "--base", "base")
    _, coloured, _ = cli("diff", "--all", overlays, "--base", "base", "--color", "always")
    assert "\x1b[" not in plain and "\x1b[32m+" in coloured
    assert "--- base/Package/cozystack.cozystack-platform" in plain
    assert "finding introduced  overlays/clusters/talos-gpu/cluster.yaml:6:16: error[GPU-05]:" in plain
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in cli("diff", "--all", overlays, "--base", "base", "--color", "auto")[1]


def test_working_tree_head_includes_dirty_and_untracked_files(cli, fleet_repo: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    write(fleet_repo, {"overlays/clusters/untracked/cluster.yaml":
                       (fleet_repo / "overlays/clusters/apt-a/cluster.yaml").read_text().replace("apt-a", "untracked")})
    standalone = fleet_repo / "overlays/clusters/standalone/cluster.yaml"
    standalone.write_text(standalone.read_text().replace("isp-full-generic", "isp-full"))
    _, data = run_json(cli, fleet_repo, "--base", "change")
    clusters = by_cluster(data)
    assert clusters["untracked"]["status"] == "added"
    assert clusters["standalone"]["status"] == "changed"
    assert clusters["apt-a"]["status"] == "unchanged" and not clusters["apt-a"]["rendered"]
    assert data["summary"]["rendered"] == {"base": 1, "head": 2}


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file and link below ``folder`` (``.git`` included) with its mode and bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*filenames, *dirnames]:
            path = Path(dirpath, name)
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                out[rel] = (0, os.readlink(path).encode())
            elif path.is_file():
                out[rel] = (path.stat().st_mode, path.read_bytes())
            else:
                out[rel] = (path.stat().st_mode, b"")
    return out


@pytest.mark.parametrize("dirty", [False, True])
def test_the_users_tree_index_and_branches_are_unchanged(cli, fleet_repo: Path, dirty: bool,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    if dirty:
        write(fleet_repo, {"overlays/clusters/apt-a/cluster.yaml":
                           (fleet_repo / "overlays/clusters/apt-a/cluster.yaml").read_text() + "gpu: {variant: none}\n",
                           "overlays/clusters/apt-bundles/cluster.yaml": "# staged\n" +
                           (fleet_repo / "overlays/clusters/apt-bundles/cluster.yaml").read_text(),
                           "notes.txt": "untracked\n"})
        git(fleet_repo, "add", "overlays/clusters/apt-bundles/cluster.yaml")
        git(fleet_repo, "stash", "list")
    status = git(fleet_repo, "status", "--porcelain=v2", "--branch")
    before = snapshot(fleet_repo)
    overlays = str(fleet_repo / "overlays")
    for args in (["--base", "base"], ["--base", "base", "--head", "change"], ["--base", "HEAD~1", "-o", "markdown"]):
        assert cli("diff", "--all", overlays, *args)[0] == 1
    assert snapshot(fleet_repo) == before
    assert git(fleet_repo, "status", "--porcelain=v2", "--branch") == status
    assert git(fleet_repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(fleet_repo, "branch", "--list").split() == ["*", "main"]


def test_a_change_touching_no_clusters_inputs_renders_no_cluster(cli, fleet_repo: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    write(fleet_repo, {"README.md": "# fleet\n\nNow with docs.\n", "docs/how.md": "how\n"})
    commit_all(fleet_repo, "docs only")
    code, data = run_json(cli, fleet_repo, "--base", "change", "--head", "HEAD")
    assert code == 0
    assert data["summary"]["rendered"] == {"base": 0, "head": 0}
    assert data["summary"]["probed"] == 7  # what each cluster reads is looked up, at the base
    assert all(c["status"] == "unchanged" and not c["rendered"] for c in data["clusters"])
    # No file differs at all: not even that.
    code, data = run_json(cli, fleet_repo, "--base", "HEAD", "--head", "HEAD")
    assert (code, data["summary"]["rendered"], data["summary"]["probed"]) == (0, {"base": 0, "head": 0}, 0)


def test_rendering_only_what_changed_equals_rendering_everything(fleet_repo: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The selection by inputs (renderer.inputs.cluster_inputs at the base) gives the same review as
    rendering every cluster on both sides, for several kinds of change."""
    import io

    from renderer.preview import PreviewRequest, run

    without_helm(monkeypatch)
    write(fleet_repo, {"overlays/base/talos.yaml": (fleet_repo / "overlays/base/talos.yaml").read_text()
                       .replace("v1.13.6", "v1.12.0"),
                       "overlays/extra/secret.yaml": "# only a comment changed\n" +
                       (fleet_repo / "overlays/extra/secret.yaml").read_text()})
    commit_all(fleet_repo, "talos version, a comment")
    pairs = [("base", "change"), ("change", "HEAD"), ("base", "HEAD"), ("HEAD", None)]
    for base, head in pairs:
        reviews = []
        for select in (True, False):
            out = io.StringIO()
            run(PreviewRequest(fleet_repo / "overlays", base, head, all_clusters=True, output="json",
                               select=select), out)
            reviews.append(json.loads(out.getvalue()))
        selected, everything = reviews
        assert everything["summary"]["rendered"]["base"] >= selected["summary"]["rendered"]["base"]
        for mine, full in zip(selected["clusters"], everything["clusters"], strict=True):
            assert mine["status"] == full["status"], (base, head, mine["cluster"])
            if mine["rendered"]:
                assert mine == full
            else:
                assert {o["status"] for o in full["objects"]} <= {"unchanged"}
                assert full["findings"] == [] and not full["changed_inputs"]
        assert selected["changed_inputs"] == everything["changed_inputs"]


def test_a_variants_folder_in_the_repository_reaches_every_cluster(cli, fleet_repo: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An override file that appears in --variants is read without any file the base read changing,
    so a change there renders every cluster; the override's effect then shows where it applies."""
    without_helm(monkeypatch)
    shipped = REPO / "variants" / "gpu" / "container-package.yaml"
    write(fleet_repo, {"variants/README.md": "overrides\n"})
    commit_all(fleet_repo, "an empty variants folder")
    write(fleet_repo, {"variants/gpu/container-package.yaml": shipped.read_text().replace(
        "variant: container", "variant: container  # reviewed")})
    commit_all(fleet_repo, "override the container route's Package")
    code, data = run_json(cli, fleet_repo, "--base", "HEAD~1", "--head", "HEAD", "--variants",
                          str(fleet_repo / "variants"))
    assert data["summary"]["rendered"] == {"base": 7, "head": 7} and data["summary"]["probed"] == 0
    assert code == 0 and data["summary"]["clusters"]["unchanged"] == 7  # a comment: the same objects


def test_a_variants_folder_outside_the_repository_is_the_same_on_both_sides(cli, fleet_repo: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    (tmp_path / "variants").mkdir()
    code, data = run_json(cli, fleet_repo, "--base", "base", "--head", "change", "--variants",
                          str(tmp_path / "variants"))
    assert code == 1 and data["summary"]["rendered"] == {"base": 6, "head": 6}


def test_the_json_validates_against_its_published_schema(cli, fleet_repo: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``cozy-render schema output preview`` is the shape (renderer/data/output-schemas/preview.schema.json)."""
    import jsonschema

    without_helm(monkeypatch)
    _, data = run_json(cli, fleet_repo, "--base", "base", "--head", "change")
    code, schema_text, _ = cli("schema", "output", "preview")
    assert code == 0
    schema = json.loads(schema_text)
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.validate(data, schema)
    assert (data["apiVersion"], data["kind"]) == ("cozy-render/v1", "PreviewReport")
    assert data["chart"] == {"mode": "model", "asked": "model", "helm": None, "helmVersion": None}
    assert isinstance(by_cluster(data)["apt-gpu"]["findings"], list) and isinstance(data["findings"], list)
    broken = {**data, "clusters": [{**data["clusters"][0], "status": "synced"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    # The same input, the same bytes.
    assert cli("diff", "--all", str(fleet_repo / "overlays"), "-o", "json", "--base", "base", "--head", "change") \
        == cli("diff", "--all", str(fleet_repo / "overlays"), "-o", "json", "--base", "base", "--head", "change")
