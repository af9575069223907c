"""A ``--platform-chart`` folder is read through ``renderer.walk`` (issue 34 items 2 and 13): a link out of
the chart never hands helm a file outside it (``/proc/self/environ`` included), a loop or a FIFO is one
PLT-CHART-FILES line, and a link inside the chart is copied as the file it names."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from renderer import walk
from renderer.effective.helm import OFFLINE_TEMPLATES, offline_chart
from renderer.errors import RenderError
from renderer.platform_chart import chart_dir
from tests.conftest import overlay_doc

SECRET = "COZY_RENDER_TEST_SECRET_7f3a"


def chart_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "my-chart"
    shutil.copytree(chart_dir("v1.6.2"), copy)
    return copy


@pytest.mark.parametrize("where", ["files/env.txt", "values.yaml", "templates/bundles/zz-env.yaml",
                                   "templates/_helpers.tpl"])
def test_a_link_out_of_the_chart_is_refused_and_never_read(helm: str, cli, cluster, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    monkeypatch.setenv("COZY_TEST_MARKER", SECRET)  # the CLI runs in this process: its environ holds it
    chart = chart_copy(tmp_path)
    link = chart / where
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists():
        link.unlink()
    os.symlink("/proc/self/environ", link)
    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": "v1.6.3-rc"}))
    code, out, err = cli("effective", str(folder), "-o", "json", "--helm", helm, "--platform-chart", str(chart))
    assert (code, out) == (3, "")
    assert err.count("\n") == 1 and "error[PLT-CHART-FILES]:" in err and where in err, err
    assert SECRET not in err and "is a link to outside the folder" in err


def test_a_link_inside_the_chart_is_copied_as_its_file(tmp_path: Path) -> None:
    chart = chart_copy(tmp_path)
    (chart / "files").mkdir(exist_ok=True)
    (chart / "files" / "real.txt").write_text("inside\n")
    os.symlink("real.txt", chart / "files" / "alias.txt")
    with offline_chart(chart, OFFLINE_TEMPLATES) as copy:
        alias = copy / "files" / "alias.txt"
        assert not alias.is_symlink() and alias.read_text() == "inside\n"
        assert not (copy / "templates" / "apps.yaml").exists() and (copy / "templates" / "bundles").is_dir()
        assert not (copy / "sources").exists()


@pytest.mark.parametrize("shape", ["loop", "fifo", "dangling", "deep"])
def test_loops_special_files_and_depth_are_refused(tmp_path: Path, shape: str) -> None:
    chart = chart_copy(tmp_path)
    if shape == "loop":
        os.symlink("..", chart / "templates" / "bundles" / "again")
    elif shape == "fifo":
        os.mkfifo(chart / "files-fifo")
    elif shape == "dangling":
        os.symlink("no-such-file", chart / "values-extra.yaml")
    else:
        deep = chart.joinpath(*["d"] * 40)
        deep.mkdir(parents=True)
        (deep / "x").write_text("")
    with pytest.raises(RenderError) as caught, offline_chart(chart):
        pass
    [finding] = caught.value.findings
    assert finding.code == "PLT-CHART-FILES"


def test_walk_budget_counts_files_and_bytes(tmp_path: Path) -> None:
    for index in range(5):
        (tmp_path / f"f{index}").write_bytes(b"x" * 10)
    assert [f.rel for f in walk.files(tmp_path)] == [f"f{i}" for i in range(5)]
    with pytest.raises(walk.WalkRefused, match="more than 4 files"):
        walk.files(tmp_path, walk.Budget(files=4))
    with pytest.raises(walk.WalkRefused, match="more than 45 bytes"):
        walk.files(tmp_path, walk.Budget(bytes=45))
