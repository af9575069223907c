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


def test_plugin_yaml_runs_our_cmp_commands() -> None:
    (plugin,) = load_all(DOCS / "argocd" / "install" / "plugin.yaml")
    assert plugin["kind"] == "ConfigManagementPlugin"
    assert plugin["spec"]["generate"]["command"] == ["cozy-render", "cmp", "generate"]
    assert "dynamic" not in plugin["spec"]["parameters"]  # static: no command per app-details request
    assert "discover" not in plugin["spec"]  # Applications name the plugin


def test_applicationset_generates_one_app_per_cluster_file() -> None:
    """Issue 20 item 8: a files generator on cluster.yaml, so a folder without one spawns nothing."""
    (appset,) = load_all(DOCS / "argocd" / "applicationset.yaml")
    (generator,) = appset["spec"]["generators"]
    assert "directories" not in generator["git"]
    (files,) = generator["git"]["files"]
    assert files["path"] == "overlays/clusters/*/cluster.yaml"
    assert appset["spec"]["goTemplate"] is True
    assert appset["spec"]["goTemplateOptions"] == ["missingkey=error"]
    matched = sorted(p.parent.name for p in (REPO / "overlays").glob("clusters/*/cluster.yaml"))
    folders = sorted(p.name for p in (REPO / "overlays" / "clusters").iterdir() if p.is_dir())
    assert matched and matched == folders
    template = appset["spec"]["template"]
    # only the files generator's path parameters are used (applicationset/generators/git.go)
    import re

    used = set(re.findall(r"\{\{\s*\.([A-Za-z_.]+)\s*\}\}", str(template)))
    assert used == {"path.path", "path.basename"}, used
    assert template["spec"]["source"]["plugin"]["name"].startswith("cozy-render-")


def test_applicationset_retries_past_a_first_platform_install() -> None:
    """Issue 20 item 1: the default (no retry policy) stops after the first failed automated sync of a commit."""
    (appset,) = load_all(DOCS / "argocd" / "applicationset.yaml")
    retry = appset["spec"]["template"]["spec"]["syncPolicy"]["retry"]
    assert retry["refresh"] is True
    backoff = retry["backoff"]

    def seconds(text: str) -> int:
        return int(text[:-1]) * {"s": 1, "m": 60}[text[-1]]

    # argo-cd RetryStrategy.NextRetryAt: duration * factor^n, capped at maxDuration
    waits = [min(seconds(backoff["duration"]) * backoff["factor"] ** n, seconds(backoff["maxDuration"]))
             for n in range(retry["limit"])]
    assert sum(waits) >= 60 * 60, sum(waits)  # an hour at least: README "First sync"
    assert max(waits) <= 5 * 60


def test_flux_split_selects_patch_objects_by_our_annotation() -> None:
    docs = load_all(DOCS / "flux" / "kustomizations.yaml")
    selectors = [p["target"]["annotationSelector"] for d in docs for p in d["spec"]["patches"]]
    assert selectors == ["render.cozystack.io/ownership=patch", "render.cozystack.io/ownership!=patch"]
    assert docs[1]["spec"]["dependsOn"] == [{"name": docs[0]["metadata"]["name"]}]
