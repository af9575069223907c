"""``renderer.shard``: the partition of a fleet over a CI matrix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from renderer import shard
from renderer.errors import EXIT_USAGE, RenderError


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 16])
def test_the_shards_cover_every_cluster_exactly_once(count: int) -> None:
    paths = [Path("tree/clusters") / f"c-{i:04d}" for i in range(200)]
    parts = [shard.select(paths, shard.Shard(k, count)) for k in range(1, count + 1)]
    assert sorted(p for part in parts for p in part) == sorted(paths)
    assert sum(len(part) for part in parts) == len(paths)
    assert all(part == sorted(part) for part in parts)  # the order given is kept


def test_adding_a_cluster_moves_no_other() -> None:
    before = {f"c-{i}": shard.shard_of(shard.key(f"c-{i}"), 4) for i in range(100)}
    after = {f"c-{i}": shard.shard_of(shard.key(f"c-{i}"), 4) for i in range(101)}
    assert {k: after[k] for k in before} == before


def test_the_partition_is_the_path_in_the_tree_not_the_checkout() -> None:
    assert shard.key(Path("/a/checkout/overlays/clusters/edge-01")) == shard.key("x/clusters/edge-01") \
        == "clusters/edge-01"


def test_the_partition_does_not_depend_on_the_hash_seed() -> None:
    code = ("from renderer import shard; "
            "print([shard.shard_of(shard.key(f'c-{i}'), 5) for i in range(50)])")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(seen) == 1
    assert seen == {str([shard.shard_of(shard.key(f"c-{i}"), 5) for i in range(50)]) + "\n"}


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "4", "a/b", "1/2/3", "", "-1/4", "²/4"])
def test_a_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(RenderError) as raised:
        shard.parse(text)
    assert raised.value.exit_code == EXIT_USAGE
    assert [f.code for f in raised.value.findings] == ["CLI-SHARD"]


def test_parse() -> None:
    assert shard.parse("3/4") == shard.Shard(3, 4) and str(shard.parse(" 1/1 ")) == "1/1"
