"""The render cache and symlinks (issue 12, class 1): retargeting or deleting a symlinked layer changes
the result exactly as a fresh render would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_cache import fleet, run  # noqa: F401 - the fixture is used by name

CLUSTER = "clusters/gpu-apt-01"


def _variant(root: Path, name: str, edit: tuple[str, str]) -> None:
    text = (root / "base/cluster.yaml").read_text()
    assert edit[0] in text
    (root / "base" / name).write_text(text.replace(*edit))


@pytest.fixture
def linked(fleet: Path) -> Path:  # noqa: F811 - pytest fixture chaining
    """The fleet with base/cluster.yaml a symlink to one of two different base layers."""
    _variant(fleet, "one.yaml", ("10.96.0.0/16", "10.98.0.0/16"))
    _variant(fleet, "two.yaml", ("10.96.0.0/16", "10.99.0.0/16"))
    (fleet / "base/cluster.yaml").unlink()
    os.symlink("one.yaml", fleet / "base/cluster.yaml")
    return fleet


def test_retargeting_a_symlinked_layer_is_a_miss(linked: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run(["render", CLUSTER], linked, cache)
    assert first[0] == 0 and "10.98.0.0/16" in first[1]
    (linked / "base/cluster.yaml").unlink()
    os.symlink("two.yaml", linked / "base/cluster.yaml")
    cached, fresh = run(["render", CLUSTER], linked, cache), run(["render", CLUSTER], linked, None)
    assert cached[:2] == fresh[:2] and "10.99.0.0/16" in cached[1]


def test_deleting_a_symlinked_layer_fails_as_a_fresh_render_does(linked: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert run(["render", CLUSTER], linked, cache)[0] == 0
    (linked / "base/cluster.yaml").unlink()
    cached, fresh = run(["render", CLUSTER], linked, cache), run(["render", CLUSTER], linked, None)
    assert fresh[0] == 3 and "error[OVL-PATH]" in fresh[2]
    assert cached[:2] == fresh[:2] and cached[2].split("|")[0] == fresh[2].split("|")[0]


def test_retargeting_a_symlinked_cluster_file_is_a_miss(fleet: Path, tmp_path: Path) -> None:  # noqa: F811
    cluster = fleet / CLUSTER / "cluster.yaml"
    text = cluster.read_text()
    for name, marker in (("a.yaml", "# a"), ("b.yaml", "# b")):
        (fleet / CLUSTER / name).write_text(text.replace("metadata:", f"{marker}\nmetadata:", 1) if name == "a.yaml"
                                            else text.replace("tenant-example", "tenant-b"))
    cluster.unlink()
    os.symlink("a.yaml", cluster)
    cache = tmp_path / "cache"
    first = run(["render", CLUSTER], fleet, cache)
    assert first[0] == 0, first
    cluster.unlink()
    os.symlink("b.yaml", cluster)
    assert run(["render", CLUSTER], fleet, cache)[:2] == run(["render", CLUSTER], fleet, None)[:2]


def test_a_path_found_missing_must_stay_missing(fleet: Path, tmp_path: Path) -> None:  # noqa: F811
    """The loader records what it looked for and did not find; the cache replays only while it is still absent."""
    from renderer import cache

    folder = tmp_path / "cache"
    root = fleet.resolve()
    cache.store(folder, "k", root, [], "out", "", resolved=[(root / "optional.yaml", None)])
    assert cache.lookup(folder, "k", root) == ("out", "")
    (root / "optional.yaml").write_text("x: 1\n")
    assert cache.lookup(folder, "k", root) is None
