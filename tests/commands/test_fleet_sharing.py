"""Issue 24 item 2: what one fleet run shares across its clusters gives every cluster the answer it gets
alone. Shared per run or per process: the variant data (read once per run), the chart version's answers
(``reads``, optional and default Packages), the catalogue's PackageSources, display names of shared
layers, the parsed shared layers (``renderer.load.layercache``) and, with ``--jobs``, the first cluster
rendered before the fork. Each cluster checked in a process of its own is the reference."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def _gen_fleet():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_fleet", REPO / "bench" / "gen_fleet.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("sharing") / "fleet"
    _gen_fleet().generate(14, tree)  # every sample shape twice
    (tree / ".git").mkdir()
    clusters = sorted((tree / "clusters").iterdir())
    # One cluster's own copy of the shared base differs (a warning and a value of its own), and one
    # cluster is broken: neither may leak into the others' answers, nor theirs into it.
    odd = clusters[3]
    (tree / "base-odd.yaml").write_text((tree / "base" / "cluster.yaml").read_text().replace(
        "podCIDR: 10.244.0.0/16", "podCIDR: 10.245.0.0/16").replace("# Shared", "# A copy\n# Shared"))
    text = (odd / "cluster.yaml").read_text()
    (odd / "cluster.yaml").write_text(text.replace("../../base/cluster.yaml", "../../base-odd.yaml"))
    broken = clusters[9] / "cluster.yaml"
    broken.write_text(broken.read_text() + "hubbel: {}\n")
    return tree


def _cozy(*args: str, cwd: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "ARGOCD_"))}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, check=False, timeout=300)
    return done.returncode, done.stdout, done.stderr


def test_a_fleet_run_gives_each_cluster_its_own_answer(fleet: Path) -> None:
    code, stdout, _ = _cozy("check", ".", "--all", "-o", "json", "--jobs", "1", cwd=fleet)
    assert code == 3  # the broken cluster's input error
    together = json.loads(stdout)["findings"]
    assert together, "the fleet has findings to compare"
    for cluster in sorted((fleet / "clusters").iterdir()):
        _, alone_out, _ = _cozy("check", f"clusters/{cluster.name}", "-o", "json", cwd=fleet)
        alone = [{**f, "cluster": cluster.name} for f in json.loads(alone_out)["findings"]]
        mine = [f for f in together if f["cluster"] == cluster.name]
        assert mine == [{**f, "cluster": f.get("cluster", cluster.name)} for f in alone], cluster.name


def test_a_fleet_render_writes_what_each_cluster_renders_alone(fleet: Path, tmp_path: Path) -> None:
    good = tmp_path / "good"
    import shutil

    shutil.copytree(fleet, good)
    broken = sorted((good / "clusters").iterdir())[9] / "cluster.yaml"
    broken.write_text(broken.read_text().replace("hubbel: {}\n", ""))
    code, _, stderr = _cozy("render", ".", "--all", "--out", str(tmp_path / "all"), cwd=good)
    assert code == 0, stderr
    for cluster in sorted((good / "clusters").iterdir()):
        code, _, stderr = _cozy("render", f"clusters/{cluster.name}", "--out", str(tmp_path / "one" / cluster.name),
                                cwd=good)
        assert code == 0, stderr
        together = {p.name: p.read_bytes() for p in (tmp_path / "all" / cluster.name).iterdir()}
        alone = {p.name: p.read_bytes() for p in (tmp_path / "one" / cluster.name).iterdir()}
        assert together == alone, cluster.name


def test_variant_data_is_shared_only_while_a_run_lasts(fleet: Path) -> None:
    from renderer import pipeline

    done = pipeline.run(fleet, pipeline.Options(refuse=False), all_clusters=True)
    assert len(done.clusters) == 14
    variants = {id(c.result.variants) for c in done.clusters if c.result is not None}
    assert len(variants) == 1  # one read of the variant data for the whole run
    assert not [name for name, value in vars(pipeline).items() if isinstance(value, pipeline.Variants)]
    alone = pipeline.run(fleet / "clusters" / done.clusters[0].name, pipeline.Options(refuse=False))
    assert alone.clusters[0].result is not None
    assert id(alone.clusters[0].result.variants) not in variants


def test_a_broken_variants_folder_is_reported_by_every_cluster(fleet: Path, tmp_path: Path) -> None:
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / "catalogue.yaml").write_text("- not: the catalogue\n- shape\n")
    from renderer import pipeline

    done = pipeline.run(fleet, pipeline.Options(variants=tmp_path / "variants", refuse=False), all_clusters=True)
    codes = {c.name: (c.refused, tuple(sorted({f.code for f in c.findings}))) for c in done.clusters}
    broken = sorted((fleet / "clusters").iterdir())[9].name  # refused by its own overlay first
    assert codes.pop(broken)[0] == 3
    assert set(codes.values()) == {(3, ("OVL-VARIANTS",))}


def test_a_render_frees_itself_without_the_collector(fleet: Path) -> None:
    """The overlay loader's and the rules' own reference cycles are broken when they finish, so a fleet's
    renders are freed by reference counting (the collector then has little to walk between clusters)."""
    from renderer import pipeline
    from renderer.check.rules import RuleContext
    from renderer.emit import RenderResult
    from renderer.load.overlay import Overlay

    cluster = sorted((fleet / "clusters").iterdir())[0]
    options = pipeline.Options(refuse=False, flux=True)
    pipeline.run_cluster(cluster, pipeline.Work(options))  # warm every lazy import and cache
    gc.collect()
    was = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        pipeline.run_cluster(cluster, pipeline.Work(options))
        gc.collect()
        ours = [o for o in gc.garbage if isinstance(o, (Overlay, RenderResult, RuleContext))]
    finally:
        gc.set_debug(was)
        gc.garbage.clear()
    assert ours == []
