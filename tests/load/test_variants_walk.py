"""A ``--variants`` folder and a ``--root`` are read through one walker (issue 34 item 2).

A symlink loop there was an internal error (exit 4, RuntimeError from ``Path.resolve``); a link out
of the ``--variants`` folder was read as a variant file. Each is now one OVL-* line naming the entry,
exit 3, before anything it names is read. Links that stay inside the folder are followed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from renderer.errors import RenderError
from renderer.load.variants import Variants, shipped_dir
from tests.conftest import BASE_OVERLAY


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "clusters" / "c1").mkdir(parents=True)
    (root / "clusters" / "c1" / "cluster.yaml").write_text(json.dumps(BASE_OVERLAY))
    (root / "vars").mkdir()
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(("entry", "target", "why"), [
    ("gpu", "gpu", "is a link loop (it leads back to itself)"),
    ("gpu", ".", "is a link loop (it leads back to a folder above it)"),
    ("catalogue.yaml", "/etc/passwd", "is a link to outside the folder; links are followed only inside it"),
])
def test_a_bad_entry_is_one_located_line(cli, tree: Path, entry: str, target: str, why: str) -> None:
    os.symlink(target, tree / "vars" / entry)
    code, out, err = cli("render", "clusters/c1", "--variants", "vars")
    assert (code, out) == (3, "")
    assert err == f"vars/{entry}: error[OVL-VARIANTS]: --variants: this entry {why}\n"


def test_the_folder_itself_looping_is_refused(cli, tree: Path) -> None:
    os.symlink("loop", tree / "loop")
    code, out, err = cli("render", "clusters/c1", "--variants", "loop")
    assert (code, out) == (3, "")
    assert err.startswith("loop: error[OVL-VARIANTS]: --variants: the folder cannot be listed: "), err


def test_a_fifo_where_a_variant_file_goes_is_refused_and_never_opened(cli, tree: Path) -> None:
    os.mkfifo(tree / "vars" / "catalogue.yaml")
    code, _, err = cli("render", "clusters/c1", "--variants", "vars")
    assert code == 3 and "vars/catalogue.yaml: error[OVL-VARIANTS]: --variants: this entry is not a regular file" in err


def test_entries_that_override_nothing_are_never_looked_at(cli, tree: Path) -> None:
    os.symlink("elsewhere", tree / "vars" / "notes")
    os.symlink("/etc/passwd", tree / "vars" / "unrelated.yaml")
    os.mkfifo(tree / "vars" / "pipe.yaml")
    code, _, err = cli("render", "clusters/c1", "--variants", "vars")
    assert code == 0, err


def test_a_link_inside_the_folder_is_an_override(tree: Path) -> None:
    shipped = (shipped_dir() / "hubble" / "values.yaml").read_text()
    (tree / "vars" / "mine").mkdir()
    (tree / "vars" / "mine" / "values.yaml").write_text(shipped)
    os.symlink("mine", tree / "vars" / "hubble")
    variants = Variants(tree / "vars")
    assert variants.load("hubble/values.yaml") == Variants().load("hubble/values.yaml")


def test_a_root_that_loops_is_refused(cli, tree: Path) -> None:
    os.symlink("r2", tree / "r1")
    os.symlink("r1", tree / "r2")
    code, out, err = cli("render", "clusters/c1", "--root", "r1")
    assert (code, out) == (3, "")
    assert err == "r1: error[OVL-PATH]: the repository root r1 is a symlink loop\n"


def test_variants_refusal_is_a_render_error(tree: Path) -> None:
    os.symlink("catalogue.yaml", tree / "vars" / "catalogue.yaml")
    with pytest.raises(RenderError) as refused:
        Variants(tree / "vars")
    assert [f.code for f in refused.value.findings] == ["OVL-VARIANTS"]


def test_a_missing_folder_overrides_nothing(tree: Path) -> None:
    """As before the walker: a preview's base side may predate the --variants folder its head adds."""
    assert Variants(tree / "absent").load("catalogue.yaml") == Variants().load("catalogue.yaml")
