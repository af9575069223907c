"""Issue 24 item 3: many clusters in one helm process give what one helm run per cluster gives, at
both vendored versions: the same documents, and the same failure for a cluster the chart refuses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from renderer.effective import helm as helm_module
from renderer.effective.packages import platform_inputs
from renderer.platform_chart import chart_dir, shipped_versions
from tests.conftest import OVERLAYS
from tests.helpers import render


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


@pytest.mark.parametrize("version", shipped_versions())
def test_each_document_parsed_once_equals_the_whole_stream_parsed(helm: str, version: str) -> None:
    """The per-document parse memo (helm._documents) gives what parsing helm's whole output gives."""
    chart = chart_dir(version, None)
    with helm_module.offline_chart(chart) as copy:
        for variant, values in _sample_inputs()[:3]:
            done = helm_module._helm_template(helm, copy, helm_module.values_files(copy, variant), values)
            assert helm_module._documents(done.stdout) == helm_module.parse_documents(done.stdout)
            # twice: the second time from the memo, still equal, and a copy the caller may change
            first = helm_module._documents(done.stdout)
            first[0]["metadata"]["name"] = "changed"
            assert helm_module._documents(done.stdout) == helm_module.parse_documents(done.stdout)


@pytest.mark.parametrize("version", shipped_versions())
def test_identical_inputs_render_once_and_each_cluster_gets_its_own_documents(
        helm: str, version: str, tmp_path: Path) -> None:
    chart = chart_dir(version, None)
    inputs = _sample_inputs()[:2]
    log = tmp_path / "helm.log"
    logging_helm = tmp_path / "helm"
    logging_helm.write_text(f"#!/bin/sh\necho \"$1\" >> {log}\nexec {helm} \"$@\"\n")
    logging_helm.chmod(0o755)
    doubled = [inputs[0], inputs[1], inputs[0], inputs[1], inputs[0]]
    batched = helm_module.render_platform_many(str(logging_helm), chart, doubled)
    assert log.read_text().split().count("template") == 1  # two distinct inputs: one umbrella of two
    single = [helm_module.render_platform(helm, chart, variant, values) for variant, values in inputs]
    for index, rendered in enumerate(batched):
        assert rendered.failure is None and rendered.documents == single[index % 2].documents
    batched[0].documents[0]["metadata"]["name"] = "changed"
    assert batched[2].documents == single[0].documents and batched[4].documents == single[0].documents


def test_a_batch_is_one_chart_on_disk_with_an_alias_per_cluster(helm: str, tmp_path: Path) -> None:
    """The umbrella holds the chart once, not a copy per cluster: helm loads it from disk once."""
    seen = tmp_path / "seen"
    spy = tmp_path / "helm"
    # the umbrella folder is the third argument of `helm template RELEASE CHART`
    spy.write_text(f"#!/bin/sh\nls \"$3/charts\" > {seen}; grep -c alias \"$3/Chart.yaml\" >> {seen}\n"
                   f"exec {helm} \"$@\"\n")
    spy.chmod(0o755)
    inputs = _sample_inputs()[:3]
    helm_module.render_platform_many(str(spy), chart_dir("v1.6.2", None), inputs)
    assert seen.read_text().split() == [helm_module.SUBCHART, "3"]


def test_check_all_with_the_chart_in_workers_finds_what_a_serial_run_finds(
        helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs workers each emit a chunk, render its charts in one helm batch and check it
    (pipeline.run_chunk): the same findings, in the same order, as one process."""
    from renderer import pipeline
    from renderer.effective import chart_check
    from renderer.effective.choice import choose

    tree = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, tree)
    (tree / ".git").mkdir()
    monkeypatch.setattr(pipeline, "_PER_WORKER", 2)  # workers for the seven samples
    monkeypatch.setattr(helm_module, "BATCH", 3)  # several chunks, each its own helm batch

    def findings(jobs: int) -> list[tuple[str, str]]:
        chart_check._memo.clear()
        options = pipeline.Options(refuse=False, chart=choose("helm", helm), jobs=jobs)
        done = pipeline.run(tree, options, all_clusters=True, keep=lambda result: len(result.objects))
        return [(name, f.format()) for name, f in done.tagged()]

    assert findings(2) == findings(1)
