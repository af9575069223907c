"""Generated artefacts (python -m renderer.generate): never stale in the checkout, never stale in output."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import OVERLAYS, REPO


def test_nothing_generated_is_stale() -> None:
    # The source tree's own generator (cwd first on sys.path): against the wheel, the tree is the unpacked sdist
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    proc = subprocess.run([sys.executable, "-m", "renderer.generate", "--check"], cwd=REPO, capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def _checkout_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "checkout"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info",
                                                             ".ci", "bench", "docs"))
    (copy / "docs").mkdir()
    shutil.copy(REPO / "docs" / "rules.md", copy / "docs" / "rules.md")
    return copy


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=copy, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(copy)})


def test_an_edited_variant_file_is_seen_at_the_next_render_and_check_names_it(tmp_path: Path) -> None:
    copy = _checkout_copy(tmp_path)
    hubble = copy / "variants" / "hubble" / "values.yaml"
    hubble.write_text(hubble.read_text(encoding="utf-8").replace("enabled: true", "enabled: true # edited", 1)
                      + "extraKnob: from-the-edit\n", encoding="utf-8")
    cluster = copy / "overlays" / "clusters" / "hubble-generic-01"
    (copy / "overlays" / ".git").mkdir()
    render = _run(copy, "renderer", "render", str(cluster))
    assert render.returncode == 0, render.stderr
    assert "extraKnob: from-the-edit" in render.stdout
    check = _run(copy, "renderer.generate", "--check")
    assert check.returncode == 1
    assert "stale: renderer/_generated/variants.json (variants bundle)" in check.stderr
    assert _run(copy, "renderer.generate").returncode == 0
    assert _run(copy, "renderer.generate", "--check").returncode == 0
    assert _run(copy, "renderer", "render", str(cluster)).stdout == render.stdout


def test_check_names_a_removed_generated_file(tmp_path: Path) -> None:
    copy = _checkout_copy(tmp_path)
    (copy / "renderer" / "_generated" / "overlay_validator.py").unlink()
    (copy / "renderer" / "_generated" / "schema_validators" / "stray.py").write_text("x = 1\n")
    check = _run(copy, "renderer.generate", "--check")
    assert check.returncode == 1
    assert "stale: renderer/_generated/overlay_validator.py (overlay validator)" in check.stderr
    assert "renderer/_generated/schema_validators/stray.py (not generated any more)" in check.stderr
    assert str(OVERLAYS)  # the samples are untouched: the test worked on a copy
