"""renderer.batch: the collector is paused between clusters, cyclic garbage is still freed, state restored."""

from __future__ import annotations

import gc
import os
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


def _hold_a_scratch_folder_and_a_child(scratch: str) -> None:
    """A worker's task: a scratch folder and a child process in its own group, then wait (mid-helm)."""
    import subprocess
    import tempfile
    import time

    from renderer.batch import scratch_held

    with scratch_held(), tempfile.TemporaryDirectory(dir=scratch) as held:
        with open(os.path.join(held, "pid"), "w") as note:
            child = subprocess.Popen(["sleep", "60"], start_new_session=True)
            note.write(str(child.pid))
        time.sleep(60)


def test_a_terminated_worker_leaves_no_folder_and_no_child(tmp_path) -> None:
    """issue 34 item 14: Pool.terminate (SIGTERM) unwinds a fleet worker: its child is killed, its folder removed."""
    import multiprocessing
    import time

    from renderer.batch import unwind_on_terminate

    with multiprocessing.get_context("fork").Pool(1, initializer=unwind_on_terminate) as pool:
        pool.apply_async(_hold_a_scratch_folder_and_a_child, (str(tmp_path),))
        for _ in range(500):  # until the worker holds its folder and its child has started
            held = [p for p in tmp_path.iterdir() if (p / "pid").is_file() and (p / "pid").read_text()]
            if held:
                break
            time.sleep(0.01)
        child = int((held[0] / "pid").read_text())
    assert list(tmp_path.iterdir()) == []
    for _ in range(100):
        # gone, or a zombie: killed, and waiting to be reaped by whoever adopted it (this process, when a
        # live diff earlier in the run made it a child subreaper: renderer.childproc.adopt_orphans)
        try:
            with open(f"/proc/{child}/stat", encoding="ascii") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.02)
    else:
        raise AssertionError(f"the worker's child {child} is still running")
