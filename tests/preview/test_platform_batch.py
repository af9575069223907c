"""Issue 24 item 3, the PR preview: ``diff --base --head`` with the real chart renders a chunk of
clusters' platform charts ahead, many to a helm process (``Reactor.prepare``), and says exactly what
one helm run per cluster says (the same JSON, ``helmRuns`` included)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.preview.conftest import commit_all, git, write

HAS_HELM = shutil.which("helm") is not None


@pytest.mark.skipif(not HAS_HELM, reason="no helm on PATH (python .ci/fetch_kubectl.py .ci/bin helm gets one)")
def test_batched_preview_equals_one_helm_run_per_cluster(cli, fleet_repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer.effective import helm as helm_module
    from renderer.preview import review

    # more clusters than a chunk, and a platform values edit in each of the new ones
    clusters = fleet_repo / "overlays" / "clusters"
    source = next(p for p in sorted(clusters.iterdir()) if (p / "cluster.yaml").is_file())
    text = (source / "cluster.yaml").read_text()
    for index in range(5):
        name = f"copy-{index:02d}"
        write(fleet_repo, {f"overlays/clusters/{name}/cluster.yaml": text.replace(source.name, name)})
    commit_all(fleet_repo, "copies")
    git(fleet_repo, "tag", "copies")
    for index in range(0, 5, 2):  # a new domain: new platform values (publishing.host)
        path = clusters / f"copy-{index:02d}" / "cluster.yaml"
        assert ".example.org" in path.read_text()
        path.write_text(path.read_text().replace(".example.org", ".example.net"))
    commit_all(fleet_repo, "edits")
    git(fleet_repo, "tag", "edits")

    log = tmp_path / "helm.log"
    logging_helm = tmp_path / "helm"
    logging_helm.write_text(f"#!/bin/sh\necho \"$1\" >> {log}\nexec {shutil.which('helm')} \"$@\"\n")
    logging_helm.chmod(0o755)

    def preview(chunk: int, batch: int, base: str, head: str) -> tuple[dict, int]:
        monkeypatch.setattr(review, "COMPARE_CHUNK", chunk)
        monkeypatch.setattr(helm_module, "BATCH", batch)
        log.unlink(missing_ok=True)
        code, out, err = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", base, "--head", head, "--chart", "helm",
                             "-o", "json", "--helm", str(logging_helm))
        assert code in (0, 1) and err == "", err
        return json.loads(out), log.read_text().split().count("template") if log.exists() else 0

    for base, head in (("base", "change"), ("base", "edits"), ("copies", "edits")):
        batched, batched_runs = preview(40, 40, base, head)
        single, single_runs = preview(1, 1, base, head)
        assert batched == single, (base, head)
        assert batched_runs <= single_runs
    assert batched_runs < single_runs  # copies -> edits: six charts, one umbrella
