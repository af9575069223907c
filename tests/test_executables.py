"""renderer.executables.on_path answers as shutil.which does for a bare program name."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from renderer.executables import on_path


def _make(path: Path, mode: int) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_matches_shutil_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, runnable, other = (tmp_path / n for n in ("plain", "runnable", "other"))
    for folder in (plain, runnable, other):
        folder.mkdir()
    _make(plain / "tool", 0o644)  # not executable: skipped
    (runnable / "dir-tool").mkdir()  # a folder: skipped
    _make(runnable / "tool", 0o755)
    _make(other / "tool", 0o755)  # later on PATH: shadowed
    path = os.pathsep.join([str(tmp_path / "missing"), str(plain), str(runnable), str(other)])
    monkeypatch.setenv("PATH", path)
    for name in ("tool", "dir-tool", "absent"):
        assert on_path(name) == shutil.which(name)
    assert on_path("tool") == str(runnable / "tool")


def test_empty_path_entry_is_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _make(tmp_path / "tool", 0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.pathsep + "/nonexistent")
    assert on_path("tool") == os.path.join(os.curdir, "tool")
