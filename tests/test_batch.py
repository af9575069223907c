"""renderer.batch: the collector is paused between clusters, cyclic garbage is still freed, state restored."""

from __future__ import annotations

import gc
import weakref

import pytest

from renderer import batch


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_garbage_cycles_of_one_cluster_are_freed_before_the_next() -> None:
    refs: list[weakref.ref[_Node]] = []
    for i in batch.clusters(range(3)):
        assert not gc.isenabled()
        if refs:
            assert refs[-1]() is None, f"cycle of cluster {i - 1} still alive"
        refs.append(weakref.ref(_Node()))
    assert gc.isenabled()


def test_the_collector_state_is_restored_on_error_and_when_it_was_off() -> None:
    with pytest.raises(RuntimeError):
        for _ in batch.clusters([1, 2]):
            raise RuntimeError("render failed")
    assert gc.isenabled()
    gc.disable()
    try:
        list(batch.clusters([1]))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_one_cluster_pays_no_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A single render (`render PATH`) must not walk the modules it imported (issue 24)."""
    calls: list[int] = []
    monkeypatch.setattr(batch.gc, "collect", lambda generation=2: calls.append(generation) or 0)
    assert list(batch.clusters(["only"])) == ["only"]
    assert calls == []
    assert list(batch.clusters(["a", "b", "c"])) == ["a", "b", "c"]
    assert calls == [1, 1]
