"""Many clusters in one process (``render --all``, ``check --all``) without the garbage collector's quadratic tax.

Every cluster's result stays alive until the whole fleet is written (``--out`` replaces the folder
atomically, at the end), so the live heap grows with the fleet. CPython's automatic collector then
keeps re-scanning that heap in full collections: 1,000 clusters took ~60% longer than with the
collector off (and 100 -> 1,000 clusters grew 12x, not 10x). Rendering one cluster makes a little
cyclic garbage (exceptions, template objects), which is why the collector is not simply switched off:
while ``clusters`` iterates, automatic collection is paused and the young generations are collected
between clusters, which frees that garbage while never walking the results already kept.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


def clusters(items: Iterable[T]) -> Iterator[T]:
    """``items``, one at a time, with the collector paused in between (restored when the loop ends).

    The young generations are collected before each item but the first, so one cluster's garbage is
    gone before the next starts."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        first = True
        for item in items:
            if not first:
                gc.collect(1)  # what the last cluster left unreachable; the kept results are older
            first = False
            yield item
        # No collection after the last one: the loop's end re-enables the collector, and a single
        # cluster (every `render PATH`) would pay a full young-generation walk, ~7 ms of its start-up,
        # over the modules it imported while rendering (issue 24).
    finally:
        if was_enabled:
            gc.enable()


# Scratch folders this process holds open (renderer.effective.helm): what a terminated worker must unwind for.
SCRATCH_HELD = [0]


@contextmanager
def scratch_held() -> Iterator[None]:
    """Mark a scratch folder held while the block runs (``unwind_on_terminate`` unwinds for it)."""
    SCRATCH_HELD[0] += 1
    try:
        yield
    finally:
        SCRATCH_HELD[0] -= 1


def unwind_on_terminate() -> None:
    """A fleet's forked worker (its pool's ``initializer``): the pool's terminate (the parent stops early,
    at helm's own failure or an interrupt, and leaving the ``with Pool`` sends SIGTERM, perhaps
    mid-helm) ends every process the worker started (helm, and whatever helm started;
    ``renderer.childproc``). A worker holding scratch folders (``cozy-render-chart-*``, ``-values-*``,
    ``-umbrella-*``: ``SCRATCH_HELD``) then unwinds like an exception, so every ``finally`` on the way
    removes them; an idle one leaves at once: unwinding a worker blocked on the pool's task queue can
    deadlock on the queue's lock at exit. The unwinding itself is bounded (``SIGALRM`` after 5 s)."""
    import os
    import signal

    def unwind(signum: int, _frame: object) -> None:
        from renderer.childproc import end_descendants

        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the clean-up itself is not cut short
        end_descendants()
        if not SCRATCH_HELD[0]:
            os._exit(128 + signum)
        signal.alarm(5)  # default action: the process ends, even if an exit handler blocks
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)
