"""Issue 24: ``--jobs`` renders a fleet in worker processes with the same answer as one process:
byte-identical stdout, the same findings in the same order, the same exit code."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="--jobs forks workers (Linux)")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = importlib.util.spec_from_file_location("gen_fleet", REPO / "bench" / "gen_fleet.py")
    assert spec and spec.loader
    gen_fleet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_fleet)
    tree = tmp_path_factory.mktemp("jobs") / "fleet"
    gen_fleet.generate(80, tree)  # enough clusters for two workers (32 each at least)
    (tree / ".git").mkdir()
    broken = sorted((tree / "clusters").iterdir())[40] / "cluster.yaml"
    broken.write_text(broken.read_text() + "hubbel: {}\n")  # one input error in the middle
    return tree


def _run(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    done = subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, capture_output=True, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", [["check", ".", "--all", "-o", "json"], ["check", ".", "--all"],
                                  ["ls", ".", "-o", "json"]], ids=["check-json", "check-text", "ls"])
def test_workers_give_the_serial_answer(fleet: Path, args: list[str]) -> None:
    serial = _run([*args, "--jobs", "1"], fleet)
    parallel = _run([*args, "--jobs", "2"], fleet)
    assert serial == parallel
    assert serial[0] in (0, 1, 3) and (serial[1] or serial[2])


def test_render_all_out_with_workers_writes_the_serial_folders(fleet: Path, tmp_path: Path) -> None:
    good = tmp_path / "fleet"
    import shutil

    shutil.copytree(fleet, good)
    broken = sorted((good / "clusters").iterdir())[40] / "cluster.yaml"
    broken.write_text(broken.read_text().replace("hubbel: {}\n", ""))
    outputs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out-{jobs}"
        code, stdout, stderr = _run(["render", ".", "--all", "--out", str(out), "--jobs", jobs], good)
        assert code == 0, stderr
        outputs.append(({p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()},
                        stdout, stderr))
    assert outputs[0] == outputs[1] and len(outputs[0][0]) > 80
    refused = _run(["render", ".", "--all", "--out", str(tmp_path / "out-broken"), "--jobs", "2"], fleet)
    assert refused[0] == 3 and not (tmp_path / "out-broken").exists()
    assert refused == _run(["render", ".", "--all", "--out", str(tmp_path / "out-broken"), "--jobs", "1"], fleet)
