"""What the cluster receives (issue 18 item 5): `render --out` marks objects holding ${ with
kustomize.toolkit.fluxcd.io/substitute: disabled; diff never reports cozy-render's own mark as drift,
and --delivery flux compares what Flux applies (the mark included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diff.helpers import cozy, overlays_repo, real_cluster, render_objects, write_list

MARK = "kustomize.toolkit.fluxcd.io/substitute"


@pytest.fixture
def dollar(tmp_path: Path) -> Path:
    cluster = overlays_repo(tmp_path) / "clusters" / "gpu-apt-01"
    text = (cluster / "cluster.yaml").read_text()
    (cluster / "cluster.yaml").write_text(text.replace('cluster: "{{ cluster.name }}"',
                                                       'cluster: "{{ cluster.name }}"\n      motd: "${HOME} stays"'))
    return cluster


@pytest.mark.parametrize("delivery", [[], ["--delivery", "argocd"], ["--delivery", "flux"]])
def test_render_out_then_diff_against_the_folder_is_clean(dollar: Path, tmp_path: Path, delivery: list[str]) -> None:
    out = tmp_path / "rendered"
    assert cozy("render", dollar, "--out", out).code == 0
    assert MARK in "".join(p.read_text() for p in out.rglob("*.yaml"))
    result = cozy("diff", dollar, "--against", out, *delivery)
    assert result.code == 0, result


def _flux_applied(cluster: Path) -> list[dict]:
    from renderer.check.flux import disable_substitution

    return real_cluster(disable_substitution(render_objects(cluster)))


def test_a_snapshot_of_what_flux_applied_is_clean_in_both_modes(dollar: Path, tmp_path: Path) -> None:
    snapshot = write_list(tmp_path / "live.yaml", _flux_applied(dollar))
    assert cozy("diff", dollar, "--snapshot", snapshot).code == 0
    assert cozy("diff", dollar, "--snapshot", snapshot, "--delivery", "flux").code == 0


def test_flux_delivery_reports_the_missing_mark(dollar: Path, tmp_path: Path) -> None:
    """Under Flux an object holding ${ without the mark would be substituted: that is drift."""
    snapshot = write_list(tmp_path / "live.yaml", real_cluster(render_objects(dollar)))
    assert cozy("diff", dollar, "--snapshot", snapshot).code == 0
    result = cozy("diff", dollar, "--snapshot", snapshot, "--delivery", "flux")
    assert result.code == 1, result
    assert f"+    {MARK}: disabled" in result.stdout
