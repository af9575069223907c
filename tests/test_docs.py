"""The deployment examples in docs/ parse and name commands that exist."""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

from tests.conftest import REPO

DOCS = REPO / "docs"


def load_all(path: Path) -> list[dict]:
    return [d for d in YAML(typ="safe").load_all(path.read_text()) if d is not None]


def test_every_docs_yaml_parses() -> None:
    files = sorted(DOCS.rglob("*.yaml"))
    assert files
    for path in files:
        assert load_all(path), path


def test_plugin_yaml_runs_our_cmp_commands(cli) -> None:
    (plugin,) = load_all(DOCS / "argocd" / "install" / "plugin.yaml")
    assert plugin["kind"] == "ConfigManagementPlugin"
    assert plugin["spec"]["generate"]["command"] == ["cozy-render", "cmp", "generate"]
    command = plugin["spec"]["parameters"]["dynamic"]["command"]
    assert command[0] == "cozy-render"
    code, out, _ = cli(*command[1:])
    assert code == 0 and out.startswith("[")


def test_applicationset_generates_one_app_per_sample_cluster() -> None:
    (appset,) = load_all(DOCS / "argocd" / "applicationset.yaml")
    (generator,) = appset["spec"]["generators"]
    (directory,) = generator["git"]["directories"]
    assert directory["path"] == "overlays/clusters/*"
    assert any((REPO / "overlays" / "clusters").glob("*/cluster.yaml"))
    assert appset["spec"]["template"]["spec"]["source"]["plugin"]["name"] == "cozy-render"


def test_flux_split_selects_patch_objects_by_our_annotation() -> None:
    docs = load_all(DOCS / "flux" / "kustomizations.yaml")
    selectors = [p["target"]["annotationSelector"] for d in docs for p in d["spec"]["patches"]]
    assert selectors == ["render.cozystack.io/ownership=patch", "render.cozystack.io/ownership!=patch"]
    assert docs[1]["spec"]["dependsOn"] == [{"name": docs[0]["metadata"]["name"]}]
