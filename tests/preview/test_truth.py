"""Issue 33: the preview says what happens, not what would happen if every render synced.

A refused side (``render`` exits 3: GPU-05 for vgpu on Talos, reference rule GPU-05) generates
nothing in Argo CD, so nothing syncs: no objects, no platform reaction, the refusing findings named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.preview.conftest import commit_all, git, without_helm, write


def preview(cli, repo: Path, *args: str, output: str = "json") -> tuple[int, str]:
    code, out, err = cli("diff", "--all", str(repo / "overlays"), "--base", "base", "--head", "change",
                         "-o", output, *args)
    assert err == "", err
    return code, out


def clusters(out: str) -> dict[str, dict]:
    return {c["cluster"]: c for c in json.loads(out)["clusters"]}


def test_a_refused_head_is_a_refusal_in_every_format(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    talos = clusters(preview(cli, fleet_repo)[1])["talos-gpu"]
    assert talos["head"]["status"] == "refused" and talos["base"]["status"] == "rendered"
    assert talos["objects"] == [] and talos["platform"] is None
    assert "GPU-05" in [f["code"] for f in talos["head"]["refused_by"]]
    _, text = preview(cli, fleet_repo, output="text")
    section = text.split("# cluster talos-gpu: changed", 1)[1].split("\n# cluster ", 1)[0]
    assert "the render at the head is refused" in section and "error[GPU-05]" in section
    assert "Package" not in section.split("refused by:", 1)[0]  # no object lines, no platform lines
    _, markdown = preview(cli, fleet_repo, output="markdown")
    part = markdown.split("<b>talos-gpu</b>", 1)[1].split("</details>", 1)[0]
    assert "refused at the head" in part and "The render at the head is refused" in part and "**GPU-05**" in part
    assert "Platform Packages" not in part


def test_a_refused_base_is_a_refusal_too(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The change may be the fix: reviewing back from the change, the base is refused."""
    without_helm(monkeypatch)
    _, out, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--head", "base",
                       "-o", "json")
    talos = clusters(out)["talos-gpu"]
    assert talos["base"]["status"] == "refused" and talos["head"]["status"] == "rendered"
    assert talos["objects"] == [] and talos["platform"] is None and talos["status"] == "changed"


def test_a_removed_cluster_lists_what_argo_cd_prunes_and_what_stays(cli, fleet_repo: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The ApplicationSet drops the Application of a deleted folder: Argo CD prunes what it synced (the
    platform Package among it), and every Package the platform release made stays (reference rule
    PLT-09: helm.sh/resource-policy keep)."""
    without_helm(monkeypatch)
    data = json.loads(preview(cli, fleet_repo)[1])
    old = {c["cluster"]: c for c in data["clusters"]}["old"]
    assert old["status"] == "removed" and "Package cozystack.cozystack-platform" in old["prune"]["pruned"]
    assert len(old["prune"]["kept"]) > 50 and "cozystack.metallb" in old["prune"]["kept"]
    (warning,) = [f for f in data["findings"] if f["cluster"] == "old"]
    assert (warning["code"], warning["severity"], warning["file"]) == (
        "PLT-09", "warning", "overlays/clusters/old/cluster.yaml")
    assert "Argo CD prunes the 1 object(s)" in warning["message"] and "stay installed" in warning["message"]
    # The deleted file is a changed input, reaching the cluster it removes, in every format.
    inputs = {i["path"]: i for i in data["changed_inputs"]}
    assert inputs["overlays/clusters/old/cluster.yaml"] == {
        "path": "overlays/clusters/old/cluster.yaml", "change": "deleted", "renamed_from": None, "kind": "file",
        "reaches": ["old"]}
    _, text = preview(cli, fleet_repo, output="text")
    assert "changed input overlays/clusters/old/cluster.yaml (deleted) reaches 1 cluster(s): old" in text
    assert "warning  overlays/clusters/old/cluster.yaml:1:1: warning[PLT-09]:" in text or \
        "warning[PLT-09]: 'old' is removed" in text or "warning[PLT-09]: old is removed" in text
    _, markdown = preview(cli, fleet_repo, output="markdown")
    assert "`overlays/clusters/old/cluster.yaml` deleted, reaches 1 cluster(s): old" in markdown
    assert "**PLT-09**: old is removed: the ApplicationSet deletes its Application" in markdown
    assert "stay installed (resource-policy keep, PLT-09): delete the Package CRs to uninstall" in markdown


def test_a_platform_package_dropped_by_the_chart_stays_installed(cli, fleet_repo: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """apt-bundles disables cozystack.metallb: the chart stops rendering it, the live one stays (PLT-09)."""
    without_helm(monkeypatch)
    data = json.loads(preview(cli, fleet_repo)[1])
    (warning,) = [f for f in data["findings"] if f["cluster"] == "apt-bundles"]
    assert warning["code"] == "PLT-09" and warning["message"].startswith(
        "cozystack.metallb is no longer rendered but stays installed (resource-policy keep)")


def test_a_moved_folder_is_a_rename_naming_both(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    git(fleet_repo, "mv", "overlays/clusters/apt-a", "overlays/clusters/apt-z")
    moved = fleet_repo / "overlays/clusters/apt-z/cluster.yaml"
    moved.write_text(moved.read_text().replace("apt-a", "apt-z"))  # metadata.name follows (OVL-NAME)
    _, out, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "-o", "json")  # uncommitted
    assert [(c["cluster"], c["renamed_from"]) for c in json.loads(out)["clusters"] if c["status"] == "renamed"] == \
        [("apt-z", "apt-a")]
    commit_all(fleet_repo, "rename apt-a")
    code, out, err = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--head", "HEAD",
                         "-o", "json")
    assert (code, err) == (1, "")
    data = json.loads(out)
    (renamed,) = [c for c in data["clusters"] if c["status"] != "unchanged"]
    assert (renamed["cluster"], renamed["status"], renamed["renamed_from"]) == ("apt-z", "renamed", "apt-a")
    assert "Package cozystack.cozystack-platform" in renamed["prune"]["pruned"] and renamed["prune"]["kept"]
    assert data["summary"]["clusters"]["renamed"] == 1 and data["summary"]["clusters"]["removed"] == 0
    assert renamed["head"]["status"] == "rendered"
    assert [(i["path"], i["change"], i["reaches"]) for i in data["changed_inputs"]] == [
        ("overlays/clusters/apt-a/cluster.yaml", "deleted", ["apt-z"]),
        ("overlays/clusters/apt-z/cluster.yaml", "added", ["apt-z"])]
    _, text, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--head", "HEAD")
    assert "renamed    cluster apt-z (renamed from apt-a)" in text
    assert "the ApplicationSet deletes the Application of apt-a and creates one for apt-z" in text
    _, markdown, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--head", "HEAD",
                         "-o", "markdown")
    assert "<b>apt-z</b>: renamed from <b>apt-a</b>" in markdown and "| apt-z | renamed from apt-a |" in markdown


def test_a_changed_variants_file_is_a_cause_in_every_format(cli, fleet_repo: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import REPO

    without_helm(monkeypatch)
    write(fleet_repo, {"variants/README.md": "overrides\n"})
    commit_all(fleet_repo, "an empty variants folder")
    shipped = REPO / "variants" / "gpu" / "container-package.yaml"
    write(fleet_repo, {"variants/gpu/container-package.yaml": shipped.read_text().replace(
        "variant: container", "variant: container  # reviewed")})
    commit_all(fleet_repo, "override the container route's Package")
    args = ("diff", "--all", str(fleet_repo / "overlays"), "--base", "HEAD~1", "--head", "HEAD", "--variants",
            str(fleet_repo / "variants"))
    data = json.loads(cli(*args, "-o", "json")[1])
    (entry,) = data["changed_inputs"]
    assert (entry["path"], entry["change"], entry["kind"]) == ("variants/gpu/container-package.yaml", "added",
                                                               "variants")
    assert len(entry["reaches"]) == 7
    assert "changed --variants file variants/gpu/container-package.yaml (added) reaches 7 cluster(s)" in cli(*args)[1]
    assert "`variants/gpu/container-package.yaml` (`--variants`) added, reaches 7 cluster(s)" in \
        cli(*args, "-o", "markdown")[1]


def test_a_platform_version_bump_names_both_versions(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    path = fleet_repo / "overlays" / "clusters" / "standalone" / "cluster.yaml"
    path.write_text(path.read_text().replace("platform:\n", "platform:\n  version: main-3c780ac\n"))
    commit_all(fleet_repo, "bump standalone")
    args = ("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--head", "HEAD")
    data = json.loads(cli(*args, "-o", "json")[1])
    assert data["platform_versions"] == [{"base": "v1.6.2", "head": "main-3c780ac", "reaches": ["standalone"]}]
    (standalone,) = [c for c in data["clusters"] if c["cluster"] == "standalone"]
    assert (standalone["base"]["platform_version"], standalone["head"]["platform_version"]) == (
        "v1.6.2", "main-3c780ac")
    text = cli(*args)[1]
    assert "platform.version v1.6.2 -> main-3c780ac in 1 cluster(s): standalone" in text  # the summary
    section = text.split("# cluster standalone: changed", 1)[1]
    assert "platform.version v1.6.2 -> main-3c780ac; what the platform does differently:" in section
    markdown = cli(*args, "-o", "markdown")[1]
    assert "**platform.version v1.6.2 \\-&gt; main\\-3c780ac** in 1 cluster(s): standalone." in markdown or \
        "**platform.version v1.6.2 -&gt; main-3c780ac** in 1 cluster(s): standalone." in markdown
    assert "<b>standalone</b>: changed" in markdown and "main-3c780ac</summary>" in markdown
    assert "- the platform chart `v1.6.2` → `main-3c780ac` (`platform.version`), reaches 1 cluster(s): standalone" \
        in markdown.split("**Changed inputs**", 1)[1]


def test_the_rerun_command_keeps_every_option(tmp_path: Path) -> None:
    import shlex

    from renderer.preview import PreviewRequest
    from renderer.preview.report import rerun_command

    request = PreviewRequest(Path("over lays"), "origin/main", "HEAD", all_clusters=True, variants=Path("vars"),
                             root=Path("."), kubernetes_version="1.32", ignore=("Package:/spec/x", "/a"),
                             chart="auto", helm="/opt/helm", platform_chart=Path("chart"))
    assert shlex.split(rerun_command(request)) == [
        "cozy-render", "diff", "--base", "origin/main", "--head", "HEAD", "--all", "--variants", "vars", "--root", ".",
        "-k", "1.32", "--chart", "auto", "--helm", "/opt/helm", "--platform-chart", "chart",
        "--ignore", "Package:/spec/x", "--ignore", "/a", "over lays"]


def test_chart_model_never_runs_helm_and_the_header_names_the_mode(cli, fleet_repo: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """One judge (issue 33 item 6): the default is check's, --chart model, whatever PATH holds."""
    import os

    fake = tmp_path / "bin"
    fake.mkdir()
    marker = tmp_path / "helm-ran"
    (fake / "helm").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (fake / "helm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    for extra in ((), ("--chart", "model")):
        code, text = preview(cli, fleet_repo, *extra, output="text")
        assert code == 1 and not marker.exists()
        assert text.splitlines()[0].endswith("; platform chart: built-in model (--chart helm renders the real chart)")
        data = json.loads(preview(cli, fleet_repo, *extra)[1])
        assert data["chart"]["mode"] == "model" and data["platform_source"] == "model"
    markdown = preview(cli, fleet_repo, output="markdown")[1]
    assert "Platform chart: built-in model" in markdown
    code, _, err = cli("diff", str(fleet_repo / "overlays" / "clusters" / "apt-a"), "--chart", "helm")
    assert code == 2 and "give --base" in err


def test_clusters_with_the_same_change_are_one_group_in_every_format(cli, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """One base-layer edit, six clusters whose change is the same (the same JSON pointers, old and new
    values): one group, the names folded, the diff shown once (issue 33 item 5)."""
    from tests.preview.conftest import BASE, cluster

    without_helm(monkeypatch)
    repo = tmp_path / "fleet"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    names = [f"edge-{i}" for i in range(6)]
    write(repo, {"overlays/base/cluster.yaml": BASE,
                 **{f"overlays/clusters/{n}/cluster.yaml": cluster(n) for n in names}})
    commit_all(repo, "base")
    git(repo, "tag", "base")
    write(repo, {"overlays/base/cluster.yaml": BASE.replace("[dashboard, api]", "[dashboard, api, vm-exportproxy]")})
    commit_all(repo, "change")
    git(repo, "tag", "change")
    data = json.loads(preview(cli, repo)[1])
    assert data["groups"] == [{"group": 0, "clusters": names}]
    assert {c["group"] for c in data["clusters"]} == {0}
    _, text = preview(cli, repo, output="text")
    assert text.count("# the same change in 6 clusters (changed; shown for edge-0): " + ", ".join(names)) == 1
    assert text.count("+++ head/") == 1
    _, markdown = preview(cli, repo, output="markdown")
    assert "<b>The same change in 6 clusters</b>" in markdown and markdown.count("```diff") == 1
    assert "| edge\\-0, edge\\-1, edge\\-2 and 3 more (6 clusters) | changed |" in markdown or \
        "| edge-0, edge-1, edge-2 and 3 more (6 clusters) | changed |" in markdown


def test_a_file_moved_as_it_is_is_one_renamed_input(cli, fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    git(fleet_repo, "mv", "overlays/extra/secret.yaml", "overlays/extra/registry.yaml")
    path = fleet_repo / "overlays/clusters/apt-secret/cluster.yaml"
    path.write_text(path.read_text().replace("extra/secret.yaml", "extra/registry.yaml"))
    commit_all(fleet_repo, "move a manifest")
    _, out, _ = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "change", "--head", "HEAD",
                    "-o", "json")
    inputs = {i["path"]: i for i in json.loads(out)["changed_inputs"]}
    assert inputs["overlays/extra/registry.yaml"]["change"] == "renamed"
    assert inputs["overlays/extra/registry.yaml"]["renamed_from"] == "overlays/extra/secret.yaml"
    assert inputs["overlays/extra/registry.yaml"]["reaches"] == ["apt-secret"]
    assert "overlays/extra/secret.yaml" not in inputs
