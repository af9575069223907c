"""Provenance re-reads what the render read, outside the render's budget (renderer.emit.provenance).

``--annotate`` and ``explain --rendered`` take each layer as the render parsed it; re-reading a layer
must not be charged to the render's file budget again, or a cluster inheriting 600 layers (inside the
1,000-file limit) would render but could not be annotated (OVL-LIMIT: "reads more than 1000 files").
"""

from __future__ import annotations

from pathlib import Path

from renderer import output
from renderer.emit import provenance
from renderer.load import layercache
from tests.helpers import render

HEAD = ("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"
        "host: {os: apt}\nplatform: {variant: isp-full-generic}\n")
BASE = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"


def test_annotate_and_explain_accept_what_render_accepts_with_600_layers(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "base").mkdir()
    for i in range(600):
        (tmp_path / "base" / f"layer-{i}.yaml").write_text(BASE + f"vars: {{k{i}: v{i}}}\n")
    inherits = ", ".join(f"../../base/layer-{i}.yaml" for i in range(600))
    (tmp_path / "clusters" / "c1").mkdir(parents=True)
    (tmp_path / "clusters" / "c1" / "cluster.yaml").write_text(HEAD + f"inherits: [{inherits}]\n")
    for cached in (True, False):  # the layers still in the render's cache, and re-read from disk
        result = render(tmp_path / "clusters" / "c1", refuse=False)
        if not cached:
            layercache.clear()
        provenance._layer_document.cache_clear()
        annotated = provenance.annotate(output.to_yaml(result.manifests), [result])
        assert "  # " in annotated
        assert provenance.entries_of([result])
