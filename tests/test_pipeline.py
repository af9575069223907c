"""Emission of the platform Package, `packages:` entries and extra manifests (renderer/pipeline.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.errors import RenderError
from tests.helpers import emitted, render

HEAD = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"


def objects(root: Path) -> list[dict]:
    return emitted(root / "clusters/c1").manifests


def by_name(objs: list[dict], name: str) -> dict:
    (obj,) = [o for o in objs if o["metadata"]["name"] == name]
    return obj


def test_minimal_platform_package_has_nothing_extra(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform: {variant: default}\n"})
    assert objects(root) == [{
        "apiVersion": "cozystack.io/v1alpha1",
        "kind": "Package",
        "metadata": {"name": "cozystack.cozystack-platform",
                     "labels": {"app.kubernetes.io/managed-by": "cozy-render",
                                "render.cozystack.io/cluster": "c1"}},
        "spec": {"variant": "default"},
    }]


def test_bundle_lists_are_sorted_deduplicated_and_keep_user_entries(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform:\n  variant: isp-full\n  values:\n"
                 "    bundles:\n      enabledPackages: [cozystack.zeta, cozystack.alpha, cozystack.zeta]\n"
                 "      disabledPackages: []\n"})
    values = by_name(objects(root), "cozystack.cozystack-platform")["spec"]["components"]["platform"]["values"]
    assert values == {"bundles": {"enabledPackages": ["cozystack.alpha", "cozystack.zeta"]}}


def test_packages_entries_short_and_full_form(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + """host: {os: apt}
platform: {variant: isp-full}
packages:
  cozystack.metallb:
    variant: default
    components: {metallb: {values: {a: 1}}}
  cozystack.kuberture:
    apiVersion: cozystack.io/v1alpha1
    kind: Package
    metadata: {name: cozystack.kuberture, annotations: {note: x}}
    spec: {variant: default}
"""})
    objs = objects(root)
    assert by_name(objs, "cozystack.metallb")["spec"] == {"variant": "default",
                                                          "components": {"metallb": {"values": {"a": 1}}}}
    kuberture = by_name(objs, "cozystack.kuberture")
    assert kuberture["spec"] == {"variant": "default"} and kuberture["metadata"]["annotations"] == {"note": "x"}


@pytest.mark.parametrize("entry, message", [
    ("cozystack.cozystack-platform: {variant: x}", "is rendered from platform:"),
    ("cozystack.x: {kind: HelmRelease}", "packages.cozystack.x.kind must be 'Package'"),
    ("cozystack.x: {metadata: {name: other}}", "metadata.name must be 'cozystack.x'"),
])
def test_bad_package_entries(repo, entry: str, message: str) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + f"host: {{os: apt}}\nplatform: {{variant: default}}\n"
                                                    f"packages:\n  {entry}\n"})
    with pytest.raises(RenderError) as info:
        objects(root)
    assert message in str(info.value) and "error[OVL-PACKAGE]" in str(info.value)


def test_manifest_files_lists_and_inline(repo, monkeypatch) -> None:
    root = repo({
        "extra/list.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, "
                           "metadata: {name: tenant-b}}\n- {apiVersion: v1, kind: ConfigMap, "
                           "metadata: {name: c, namespace: tenant-b, labels: {team: x}}, data: {enabled: yes}}\n",
        "clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform: {variant: default}\nmanifests:\n"
                                           "  - ../../extra/list.yaml\n"
                                           "  - {apiVersion: v1, kind: Namespace, metadata: {name: tenant-a}}\n",
    })
    objs = objects(root)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("Namespace", "tenant-a"), ("Namespace", "tenant-b"), ("Package", "cozystack.cozystack-platform"),
        ("ConfigMap", "c")]
    cm = by_name(objs, "c")
    assert cm["data"] == {"enabled": True}  # manifests are read as YAML 1.1, like kubectl reads them
    assert cm["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "cozy-render",
                                        "render.cozystack.io/cluster": "c1", "team": "x"}


def test_an_inline_list_is_unpacked_as_one_from_a_file(repo) -> None:
    """Issue 19 item 7: the README's "a List is unpacked" holds inline too."""
    items = "[{apiVersion: v1, kind: Namespace, metadata: {name: tenant-b}}, " \
            "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: tenant-b}, data: {x: '1'}}]"
    inline = repo({"clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform: {variant: default}\nmanifests:\n"
                                                      f"  - {{apiVersion: v1, kind: List, items: {items}}}\n"})
    from_file = repo({"extra/list.yaml": f"apiVersion: v1\nkind: List\nitems: {items}\n",
                      "clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform: {variant: default}\n"
                                                         "manifests:\n  - ../../extra/list.yaml\n"})
    assert objects(inline) == objects(from_file)
    assert [o["kind"] for o in objects(inline)] == ["Namespace", "Package", "ConfigMap"]


@pytest.mark.parametrize("manifest, message", [
    ("- {kind: ConfigMap, metadata: {name: x}}", "manifest has no apiVersion"),
    ("- {apiVersion: v1, kind: ConfigMap}", "ConfigMap has no metadata.name"),
    ("- [1, 2]", "manifests[0] must be a string or an object, got array"),
    ("- ../../nope.yaml", "does not exist"),
])
def test_bad_manifests(repo, manifest: str, message: str) -> None:
    root = repo({"clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform: {variant: default}\n"
                                                    f"manifests:\n  {manifest}\n"})
    with pytest.raises(RenderError) as info:
        objects(root)
    assert message in str(info.value)


def test_duplicate_objects_are_refused(repo, monkeypatch) -> None:
    ns = "{apiVersion: v1, kind: Namespace, metadata: {name: a}}"
    root = repo({"clusters/c1/cluster.yaml": HEAD + f"host: {{os: apt}}\nplatform: {{variant: default}}\n"
                                                    f"manifests:\n  - {ns}\n  - {ns}\n"})
    monkeypatch.chdir(root)
    with pytest.raises(RenderError) as info:
        objects(root)
    assert str(info.value) == ("clusters/c1/cluster.yaml:8:5: error[OVL-DUPLICATE]: Namespace a is rendered twice "
                               "(first from clusters/c1/cluster.yaml:7:5)")


def test_a_mistake_a_rule_explains_is_reported_once(repo, monkeypatch) -> None:
    """spec.values is both PKG-05 and an additional property of the CRD schema: the rule speaks."""
    root = repo({"clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform: {variant: isp-full}\npackages:\n"
                 "  cozystack.kuberture:\n    variant: default\n    values: {a: 1}\n"})
    monkeypatch.chdir(root)
    with pytest.raises(RenderError) as info:
        render(root / "clusters/c1")
    assert [f.code for f in info.value.findings] == ["PKG-05"]


def test_variants_bundle_is_fresh() -> None:
    from renderer.load.variants import BUNDLE, bundle_source

    assert BUNDLE.read_text() == bundle_source(), "regenerate: python -m renderer.load.variants"


def test_user_variants_override_the_bundle(tmp_path: Path) -> None:
    from renderer.load.variants import Variants

    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "facts.yaml").write_text("mine: true\n")
    assert Variants(tmp_path).load("gpu/facts.yaml") == [{"mine": True}]
    assert Variants().load("gpu/facts.yaml") != [{"mine": True}]


def test_packages_entry_tuning_a_platform_package_is_a_patch(repo) -> None:
    """PLT-11: it must never be the object that creates the platform's Package, and never Helm's label."""
    root = repo({"clusters/c1/cluster.yaml": HEAD + "host: {os: apt}\nplatform: {variant: isp-full}\npackages:\n"
                 "  cozystack.metallb: {variant: default, metadata: {annotations: {argocd.argoproj.io/sync-wave: '5'}}}\n"
                 "  cozystack.kuberture: {variant: default}\n"})
    objs = objects(root)
    metallb = by_name(objs, "cozystack.metallb")["metadata"]
    assert metallb["annotations"] == {
        "argocd.argoproj.io/sync-options": "ServerSideApply=true,Prune=false,Delete=false",
        "argocd.argoproj.io/sync-wave": "5",  # the user's own value wins
        "kustomize.toolkit.fluxcd.io/prune": "disabled",
        "render.cozystack.io/ownership": "patch",
    }
    assert "app.kubernetes.io/managed-by" not in metallb["labels"]
    kuberture = by_name(objs, "cozystack.kuberture")["metadata"]  # optional, not enabled: ours alone
    assert "annotations" not in kuberture and kuberture["labels"]["app.kubernetes.io/managed-by"] == "cozy-render"


def test_user_variant_files_are_read_like_overlays(tmp_path: Path) -> None:
    from renderer.load.variants import Variants

    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "facts.yaml").write_text("a: [1, 2\n")
    with pytest.raises(RenderError) as info:
        Variants(tmp_path).load("gpu/facts.yaml")
    (finding,) = info.value.findings
    assert finding.code == "OVL-YAML" and finding.location.path.endswith("gpu/facts.yaml") and finding.location.line
