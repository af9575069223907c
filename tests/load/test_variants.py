"""renderer.load.variants: shipped variant data is verified against the bundle once per process, never stale."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from renderer.load import variants


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "variants"
    shutil.copytree(variants.shipped_dir(), copy)
    monkeypatch.setattr(variants, "shipped_dir", lambda: copy)
    monkeypatch.setattr(variants, "_verified", {})
    return copy


def _hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = variants._digest

    def counting(path: Path) -> str:
        calls.append(path.name)
        return real(path)

    monkeypatch.setattr(variants, "_digest", counting)
    return calls


def test_unchanged_files_are_hashed_once_per_process(shipped: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(variants, "_RACY_NS", 0)
    hashed = _hashed(monkeypatch)
    first = variants.Variants().load("hubble/values.yaml")
    count = len(hashed)
    assert count == len(variants.bundle_index())
    assert variants.Variants().load("hubble/values.yaml") == first
    assert len(hashed) == count


def test_a_file_edited_during_the_run_is_read_again_even_with_its_mtime_restored(
        shipped: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(variants, "_RACY_NS", 0)
    values = shipped / "hubble" / "values.yaml"
    before = variants.Variants().load("hubble/values.yaml")
    text = values.read_text(encoding="utf-8")
    st = values.stat()
    edited = text.replace("relay:\n  enabled: true", "relay:\n  enabled: fals", 1)  # same length
    assert edited != text and len(edited) == len(text)
    values.write_text(edited, encoding="utf-8")
    os.utime(values, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = variants.Variants().load("hubble/values.yaml")
    assert after != before and "fals" in repr(after)


def test_a_recently_changed_file_is_hashed_on_every_render(shipped: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed = _hashed(monkeypatch)  # the copy was just written: within the racy window
    variants.Variants()
    variants.Variants()
    assert len(hashed) == 2 * len(variants.bundle_index())
