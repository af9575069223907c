"""ARGOCD_APP_SOURCE_PATH cannot move the repository root out of the checkout (issue 34 item 19).

The root bounds every ``inherits`` and ``manifests`` path; a source path that put it above what the
cmp-server unpacked would let a layer read the sidecar's own files. Run as Argo CD runs the plugin:
``cmp generate`` in the Application's folder under ``_cmp_server/<id>/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from renderer.errors import RenderError
from tests.conftest import REPO

LAYER = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nhost: {os: apt}\nplatform: {variant: default}\n"


def _checkout(tmp_path: Path) -> Path:
    """A cmp-server checkout whose cluster inherits a file beside ``_cmp_server`` (outside the checkout)."""
    app = tmp_path / "_cmp_server" / "7a1c" / "clusters" / "c1"
    app.mkdir(parents=True)
    (app / "cluster.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
                                      "metadata: {name: c1}\ninherits: [../../../../sidecar.yaml]\n")
    (tmp_path / "sidecar.yaml").write_text(LAYER)
    return app


def _generate(app: Path, source_path: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER"))}
    env.update(PYTHONPATH=str(REPO), ARGOCD_APP_SOURCE_PATH=source_path)
    return subprocess.run([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=app, env=env,
                          capture_output=True, text=True)


@pytest.mark.parametrize("form", ["absolute", "above", "parent"])
def test_a_source_path_that_moves_the_root_up_is_refused(tmp_path: Path, form: str) -> None:
    app = _checkout(tmp_path)
    source = {"absolute": str(app), "above": "_cmp_server/7a1c/clusters/c1", "parent": "../7a1c/clusters/c1"}[form]
    proc = _generate(app, source)
    assert proc.returncode == 3 and proc.stdout == "", proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error[CMP-SOURCE-PATH]: ARGOCD_APP_SOURCE_PATH "), line
    assert "Traceback" not in proc.stderr and "cozystack" not in proc.stdout


def test_the_applications_own_path_keeps_the_root_at_the_checkout(tmp_path: Path) -> None:
    proc = _generate(_checkout(tmp_path), "clusters/c1")
    assert proc.returncode == 3 and proc.stdout == ""
    assert "error[OVL-PATH]: inherits entry '../../../../sidecar.yaml' points outside the overlay repository" \
        in proc.stderr


def test_a_git_folder_bounds_the_checkout_outside_a_cmp_server(tmp_path: Path) -> None:
    from renderer.cmp import checkout

    app = tmp_path / "repo" / "clusters" / "c1"
    app.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    assert checkout(app, "clusters/c1").root == tmp_path / "repo"  # type: ignore[union-attr]
    with pytest.raises(RenderError) as refused:
        checkout(app, "repo/clusters/c1")
    assert refused.value.findings[0].code == "CMP-SOURCE-PATH"


def test_the_render_cache_never_replays_a_refused_source_path() -> None:
    from renderer.load.roots import checkout_parts

    app = ("/", "tmp", "_cmp_server", "7a1c", "clusters", "c1")
    assert checkout_parts(app, "clusters/c1") == (("/", "tmp", "_cmp_server", "7a1c"), "")
    for hostile in ("/tmp/_cmp_server/7a1c/clusters/c1", "_cmp_server/7a1c/clusters/c1", "tmp/_cmp_server/7a1c/clusters/c1"):
        assert checkout_parts(app, hostile) is None
