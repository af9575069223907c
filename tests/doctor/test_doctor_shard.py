"""``doctor --all --shard K/N`` and ``merge``: the shards' reports merged are one run's report."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from renderer.cli import main
from tests.commands.test_shard import valid
from tests.conftest import OVERLAYS
from tests.doctor import fake_state as fs
from tests.doctor.fake_state import DoctorFake

pytestmark = pytest.mark.loopback  # the API fakes listen on 127.0.0.1

CONTAINER, PASSTHROUGH, TALOS = "gpu-apt-01", "gpu-passthrough-01", "gpu-talos-01"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """The samples with three GPU clusters live: one with a documented failure, one healthy, one that
    cannot be read (403); the others have no GPU route, so nothing to read."""
    from tests.kubefake import kubeconfig

    repo = tmp_path / "repo"
    shutil.copytree(OVERLAYS, repo)
    (repo / ".git").mkdir()
    shutil.rmtree(repo / "clusters" / "vgpu-apt-01")
    fakes = {name: DoctorFake() for name in (CONTAINER, PASSTHROUGH, TALOS)}
    fakes[CONTAINER].load(fs.leftover_workload_label())
    fakes[PASSTHROUGH].load(fs.healthy_passthrough())
    fakes[TALOS].load(fs.healthy_talos())
    fakes[TALOS].fail(r"/api/v1/nodes$", 403)
    yield repo, kubeconfig(tmp_path / "kubeconfig", fakes)  # type: ignore[arg-type]
    for fake in fakes.values():
        fake.stop()


@pytest.mark.parametrize("count", [2, 4])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_doctor_shards_merged_are_one_run(fleet: tuple[Path, Path], tmp_path: Path, fmt: str, count: int) -> None:
    repo, config = fleet
    args = ["doctor", str(repo), "--all", "--kubeconfig", str(config), "--concurrency", "1"]
    whole = invoke(*args, "-o", fmt)
    assert whole[0] == 3 and "DIFF-LIVE" in whole[2] and CONTAINER in whole[1], whole[2]
    reports = []
    for k in range(1, count + 1):
        report = tmp_path / f"doctor-{k}.json"
        out = invoke(*args, "--shard", f"{k}/{count}", "-o", "json")[1]
        valid(out)
        report.write_text(out, encoding="utf-8")
        reports.append(str(report))
    assert invoke("merge", *reports, "-o", fmt) == whole


def test_a_refused_render_in_one_shard_is_one_runs_refusal(fleet: tuple[Path, Path], tmp_path: Path) -> None:
    repo, config = fleet
    (repo / "clusters" / "vlan-apt-01" / "cluster.yaml").write_text("host: [unclosed\n", encoding="utf-8")
    args = ["doctor", str(repo), "--all", "--kubeconfig", str(config)]
    whole = invoke(*args)
    assert whole[0] == 3 and "OVL-YAML" in whole[2] and whole[1] == ""
    reports = []
    for k in (1, 2):
        report = tmp_path / f"doctor-{k}.json"
        report.write_text(invoke(*args, "--shard", f"{k}/2", "-o", "json")[1], encoding="utf-8")
        reports.append(str(report))
    assert invoke("merge", *reports) == whole
