"""The start-up fast path behaves exactly like the Click commands it stands in for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OVERLAYS, REPO

ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("ARGOCD_")}, "PYTHONPATH": str(REPO)}
VIA_CLICK = "import sys; from renderer.cli import main; sys.argv[0] = 'cozy-render'; main()"
VIA_ENTRY = "import sys; from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()"


def run(code: str, *args: str, cwd: Path = REPO) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=ENV, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def broken_repo(tmp_path: Path) -> Path:
    app = tmp_path / "clusters" / "c1"
    app.mkdir(parents=True)
    (app / "cluster.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
                                      "metadata: {name: c1}\nhost: {os: apt}\nplatform: {variant: default}\n"
                                      "gpu: {variant: nope}\n")
    return app


@pytest.mark.parametrize("args", [
    ("render", "overlays/clusters/gpu-apt-01"),
    ("render", "overlays/clusters/gpu-apt-01/cluster.yaml"),
    ("render", "does/not/exist"),
])
def test_render_fast_path_equals_click(args: tuple[str, ...]) -> None:
    assert run(VIA_ENTRY, *args) == run(VIA_CLICK, *args)


def test_render_fast_path_error_equals_click(tmp_path: Path) -> None:
    app = str(broken_repo(tmp_path))
    fast, slow = run(VIA_ENTRY, "render", app), run(VIA_CLICK, "render", app)
    assert fast == slow and fast[0] == 3 and "error[OVL-SCHEMA]" in fast[2]


def test_cmp_generate_fast_path_equals_click(tmp_path: Path) -> None:
    app = OVERLAYS / "clusters" / "gpu-apt-01"
    assert run(VIA_ENTRY, "cmp", "generate", cwd=app) == run(VIA_CLICK, "cmp", "generate", cwd=app)
    bad = broken_repo(tmp_path)
    assert run(VIA_ENTRY, "cmp", "generate", cwd=bad) == run(VIA_CLICK, "cmp", "generate", cwd=bad)


def test_fast_path_does_not_import_click() -> None:
    probe = ("import sys, atexit; atexit.register(lambda: sys.stderr.write('CLICK=%s' % ('click' in sys.modules)));"
             + VIA_ENTRY)
    code, _, err = run(probe, "render", "overlays/clusters/gpu-apt-01")
    assert code == 0 and err.endswith("CLICK=False")
    code, _, err = run(probe, "render", "--help")
    assert code == 0 and err.endswith("CLICK=True")
