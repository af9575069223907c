"""Issue 24 item 3: many clusters in one helm process give what one helm run per cluster gives, at
both vendored versions: the same documents, and the same failure for a cluster the chart refuses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from renderer.effective import helm as helm_module
from renderer.effective.packages import platform_inputs
from renderer.pipeline import render
from renderer.platform_chart import chart_dir, shipped_versions
from tests.conftest import OVERLAYS, REPO


@pytest.fixture(scope="module")
def helm() -> str:
    found = shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))
    if not found:
        pytest.skip("no helm 3 on PATH or in .ci/bin (bash .ci/run fetches it before the tests)")
    return found


def _sample_inputs() -> list[tuple[str, dict]]:
    inputs = []
    for cluster in sorted((OVERLAYS / "clusters").iterdir()):
        variant, values, _ = platform_inputs(render(cluster, refuse=False))
        inputs.append((variant, values))
    return inputs


@pytest.mark.parametrize("version", shipped_versions())
def test_batched_helm_equals_one_run_per_cluster(helm: str, version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = chart_dir(version, None)
    inputs = _sample_inputs()
    # values that break or bend the chart in the middle of a batch: a failure, a null that deletes a
    # chart default, an empty map
    inputs.insert(2, ("isp-full", {"bundles": {"system": {"variant": 1}}}))
    inputs.insert(4, ("isp-full", {"bundles": {"disabledPackages": None}, "networking": {}}))
    inputs.insert(5, ("default", {}))
    monkeypatch.setattr(helm_module, "BATCH", 4)  # several batches, one of them failing
    batched = helm_module.render_platform_many(helm, chart, inputs)
    single = [helm_module.render_platform(helm, chart, variant, values) for variant, values in inputs]
    assert len(batched) == len(single) == len(inputs)
    for index, (one, many) in enumerate(zip(single, batched, strict=True)):
        assert (many.failure is None) == (one.failure is None), index
        if one.failure is not None:
            assert many.failure is not None and many.failure.message == one.failure.message, index
        else:
            assert many.documents == one.documents, index
    assert any(r.failure is not None for r in single) and any(r.documents for r in single)


def test_check_all_with_the_chart_batches_helm_and_finds_what_one_run_per_cluster_finds(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check --all --chart helm over the samples: a few helm processes, not one per cluster, and the
    same findings as one helm run per cluster (BATCH = 1)."""
    from renderer.effective import chart_check
    from renderer.effective.choice import choose
    from renderer.pipeline import Options, run

    log = tmp_path / "helm.log"
    logging_helm = tmp_path / "helm"
    logging_helm.write_text(f"#!/bin/sh\necho \"$1\" >> {log}\nexec {helm} \"$@\"\n")
    logging_helm.chmod(0o755)
    tree = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, tree)
    (tree / ".git").mkdir()

    def findings(batch: int) -> tuple[list[tuple[str, str]], int]:
        monkeypatch.setattr(helm_module, "BATCH", batch)
        chart_check._memo.clear()
        log.unlink(missing_ok=True)
        options = Options(refuse=False, chart=choose("helm", str(logging_helm)))
        done = run(tree, options, all_clusters=True)
        templates = log.read_text().split().count("template")
        return [(name, f.format()) for name, f in done.tagged()], templates

    batched, batched_runs = findings(40)
    single, single_runs = findings(1)
    assert batched == single
    assert single_runs == 7 and batched_runs < single_runs
