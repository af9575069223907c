"""renderer.load.layercache: shared base layers parse once per process, and are never served stale."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from renderer.errors import RenderError
from renderer.load import layercache, overlay
from tests.helpers import render

BASE = """apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
host: {os: apt}
platform:
  variant: isp-full-generic
  values: {publishing: {host: HOST-A.example.org}}
"""


def _cluster(name: str) -> str:
    return f"""apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
metadata: {{name: {name}}}
inherits: [../../base.yaml]
"""


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    layercache.clear()


@pytest.fixture
def fleet(repo) -> Path:
    return repo({"base.yaml": BASE, **{f"clusters/c{i}/cluster.yaml": _cluster(f"c{i}") for i in range(3)}})


def _platform_host(result) -> str:
    (platform,) = [o for o in result.manifests if o["metadata"]["name"] == "cozystack.cozystack-platform"]
    host: str = platform["spec"]["components"]["platform"]["values"]["publishing"]["host"]
    return host


def test_a_shared_base_is_parsed_once_per_process(fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = overlay._parse_layer

    def counting(text: str, display: str):
        parsed.append(Path(display).name)
        return real(text, display)

    monkeypatch.setattr(overlay, "_parse_layer", counting)
    for i in range(3):
        render(fleet / "clusters" / f"c{i}")
    assert sorted(parsed) == ["base.yaml", "cluster.yaml", "cluster.yaml", "cluster.yaml"]


def test_a_layer_edited_during_the_run_is_read_again_even_with_the_same_size_and_mtime(fleet: Path) -> None:
    base = fleet / "base.yaml"
    assert _platform_host(render(fleet / "clusters" / "c0")) == "HOST-A.example.org"
    stat = base.stat()
    base.write_text(BASE.replace("HOST-A", "HOST-B"), encoding="utf-8")  # same length
    os.utime(base, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert base.stat().st_size == stat.st_size and base.stat().st_mtime_ns == stat.st_mtime_ns
    assert _platform_host(render(fleet / "clusters" / "c1")) == "HOST-B.example.org"


def test_a_failing_layer_is_not_kept(fleet: Path) -> None:
    base = fleet / "base.yaml"
    good = base.read_text(encoding="utf-8")
    base.write_text(good.replace("host: {os: apt}", "host: {os: apt, bogus: 1}"), encoding="utf-8")
    for _ in range(2):  # refused every time, with its position
        with pytest.raises(RenderError) as refused:
            render(fleet / "clusters" / "c0")
        assert "base.yaml:3:" in str(refused.value.findings[0].location)
    base.write_text(good, encoding="utf-8")
    assert _platform_host(render(fleet / "clusters" / "c0")) == "HOST-A.example.org"


def test_callers_get_their_own_copy() -> None:
    def parse(text: str, display: str):
        return {"a": {"b": [1]}}, {("a",): None}

    first, first_locs = layercache.parsed_layer("x.yaml", "text", parse)
    first["a"]["b"].append(2)
    first_locs.clear()
    again, again_locs = layercache.parsed_layer("x.yaml", "text", parse)
    assert again == {"a": {"b": [1]}} and again_locs == {("a",): None}


def test_the_cache_is_bounded() -> None:
    for i in range(layercache.MAX_LAYERS + 10):
        layercache.parsed_layer(f"f{i}.yaml", "t", lambda text, display: ({}, {}))
    assert len(layercache._layers) == layercache.MAX_LAYERS


def test_a_hit_charges_the_budget_parsing_would_have_spent() -> None:
    budget = {"left": 100}

    def parse(text: str, display: str):
        budget["left"] -= 7  # what building the layer's nodes costs
        return {"a": 1}, {}

    def charge(cost: int) -> None:
        budget["left"] -= cost

    def left() -> int:
        return budget["left"]

    layercache.parsed_layer("x.yaml", "text", parse, left, charge)
    assert budget["left"] == 93
    layercache.parsed_layer("x.yaml", "text", parse, left, charge)  # a hit: not parsed, still charged
    assert budget["left"] == 86


def test_a_base_served_from_the_cache_still_counts_against_the_render_budget(
        fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer.load import limits

    overlay.load_overlay(fleet / "clusters" / "c0")  # parses and keeps base.yaml
    used = limits.MAX_NODES - limits.current().nodes
    monkeypatch.setattr(limits, "MAX_NODES", used - 1)  # one node short of what a cluster needs
    with pytest.raises(RenderError) as refused:
        overlay.load_overlay(fleet / "clusters" / "c1")  # base.yaml is a cache hit here
    assert refused.value.findings[0].code == "OVL-LIMIT"
    layercache.clear()
    with pytest.raises(RenderError):  # the same verdict as a render that parses everything
        overlay.load_overlay(fleet / "clusters" / "c2")
