"""diff --effective: the effective Package set (real helm on the vendored chart, cozy-render's objects on
top) against the live Packages (issue 10 item 6). Hand edits of platform Packages and keep-policy
leftovers of the platform release show; the render alone would not see them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.diff.helpers import cozy, overlays_repo, write_list
from tests.kubefake import realistic

pytestmark = pytest.mark.skipif(shutil.which("helm") is None,
                                reason="helm is not on PATH (.ci/run fetches helm 3.17.2 into .ci/bin)")


@pytest.fixture
def apt(tmp_path: Path) -> Path:
    return overlays_repo(tmp_path) / "clusters" / "gpu-apt-01"


def effective_live(cluster: Path) -> list[dict]:
    """What the cluster holds once the platform release and cozy-render have both synced: the
    effective set, with Helm's metadata on the platform's Packages."""
    from renderer.effective.packages import COZY_RENDER, effective_packages
    from tests.helpers import render

    result = render(cluster)
    live = [realistic(json.loads(json.dumps(e.obj))) for e in result.objects if not e.is_package()]
    for p in effective_packages(result):
        obj = json.loads(json.dumps(p.obj))
        live.append(realistic(obj, helm=p.origin != COZY_RENDER))
    return live


def test_the_live_effective_set_shows_no_differences(apt: Path, tmp_path: Path) -> None:
    snapshot = write_list(tmp_path / "live.json", effective_live(apt), "json")
    result = cozy("diff", apt, "--snapshot", snapshot, "--effective")
    assert result.code == 0, result
    statuses = {line.split()[0] for line in result.stdout.splitlines()[:-1]}
    assert statuses == {"unchanged"}
    assert "Package cozystack.multus" in result.stdout  # a Package only the platform chart renders
    assert result.stdout.count("\n") > 40  # the whole platform, not just the render


def test_a_hand_edit_of_a_platform_package_and_a_keep_leftover_show(apt: Path, tmp_path: Path) -> None:
    live = effective_live(apt)
    multus = next(o for o in live if o["kind"] == "Package" and o["metadata"]["name"] == "cozystack.multus")
    multus["spec"]["variant"] = "hand-edited"
    leftover = realistic({"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                          "metadata": {"name": "cozystack.retired-tool"}, "spec": {"variant": "default"}}, helm=True)
    snapshot = write_list(tmp_path / "live.json", [*live, leftover], "json")
    result = cozy("diff", apt, "--snapshot", snapshot, "--effective")
    assert result.code == 1, result
    assert "to change             Package cozystack.multus" in result.stdout
    assert "-  variant: hand-edited" in result.stdout
    assert "orphaned              Package cozystack.retired-tool" in result.stdout
    assert "warning[PLT-09]: cozystack.retired-tool is no longer rendered" in result.stderr
    # Without --effective only cozy-render's own objects are compared: neither shows.
    plain = cozy("diff", apt, "--snapshot", snapshot)
    assert "cozystack.multus" not in plain.stdout and "retired-tool" not in plain.stdout


def test_effective_needs_helm_and_refuses_a_rendered_folder(apt: Path, tmp_path: Path) -> None:
    result = cozy("diff", apt, "--against", tmp_path, "--effective")
    assert result.code == 2 and "--effective compares with the live Packages" in result.stderr
    result = cozy("diff", apt, "--snapshot", tmp_path, "--helm", "helm")
    assert result.code == 2 and "give --effective" in result.stderr
