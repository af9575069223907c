"""No library noise on stderr (issue 34 item 4): a dependency's warning (urllib3's FutureWarning about
its next major version, InsecureRequestWarning on each request to an insecure-skip-tls-verify server)
is not printed by any command, and ``PYTHONWARNINGS=error`` cannot turn one into an internal error;
a warning raised in cozy-render's own modules still follows ``-W``/``PYTHONWARNINGS``.

Each run is a real CLI process. The dependency's warning is raised, mid-command, as the library
raises it (``warnings.warn_explicit`` names the module it comes from).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BASE_OVERLAY, OVERLAYS, REPO

# Wraps the render every command runs so that, during the command, urllib3 and then cozy-render
# each raise a warning; then runs cozy-render's console entry point with the rest of argv.
PROBE = """
import sys, warnings
import renderer.pipeline as pipeline
original = pipeline.run
def noisy(*args, **kwargs):
    warnings.warn_explicit("URLs without a scheme are deprecated", FutureWarning,
                           "urllib3/poolmanager.py", 441, module="urllib3.poolmanager")
    if OURS:
        warnings.warn_explicit("cozy-render's own", UserWarning, "renderer/pipeline.py", 1, module="renderer.pipeline")
    return original(*args, **kwargs)
pipeline.run = noisy
sys.argv = ["cozy-render", *sys.argv[1:]]
from renderer.entry import main
main()
"""


def _run(args: list[str], warnings_option: str, ours: bool = False, cwd: Path = OVERLAYS) \
        -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER", "PYTHONWARNINGS"))}
    env.update(PYTHONPATH=str(REPO), PYTHONWARNINGS=warnings_option)
    return subprocess.run([sys.executable, "-c", f"OURS = {ours}\n{PROBE}", *args], capture_output=True, text=True,
                          env=env, cwd=cwd)


@pytest.fixture
def snapshot(cluster) -> Path:
    folder = cluster(BASE_OVERLAY).parent.parent
    (folder / "live.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: elsewhere\n")
    return folder


@pytest.mark.parametrize("option", ["always", "error", "default"])
def test_a_dependencys_warning_never_reaches_stderr(snapshot: Path, option: str) -> None:
    proc = _run(["diff", "clusters/c1", "--snapshot", "live.yaml"], option, cwd=snapshot)
    assert proc.returncode == 1, proc.stderr  # the diff itself: there are changes
    assert "Warning" not in proc.stderr and "urllib3" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr


def test_a_render_prints_no_warning_under_always() -> None:
    proc = _run(["render", "clusters/gpu-apt-01"], "always")
    assert proc.returncode == 0 and proc.stdout.startswith("apiVersion:")
    assert [line for line in proc.stderr.splitlines() if "Warning" in line] == []


def test_cozy_renders_own_warnings_still_follow_the_settings() -> None:
    shown = _run(["render", "clusters/gpu-apt-01"], "always", ours=True)
    assert "renderer/pipeline.py:1: UserWarning: cozy-render's own" in shown.stderr
    assert "FutureWarning" not in shown.stderr
    raised = _run(["render", "clusters/gpu-apt-01"], "error", ours=True)
    assert raised.returncode == 4 and "UserWarning: cozy-render's own" in raised.stderr
