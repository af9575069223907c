"""Per-cluster work on threads under one deadline: ``diff`` and ``doctor`` read their clusters through it.

``fan_out(jobs, concurrency, deadline)`` runs each job at most ``concurrency`` at a time, each in a
daemon thread, so that a request stuck past the deadline cannot keep the process alive (the command's
exit, ``renderer.entry._leave``, does not wait for it). The main thread waits until the deadline plus a
short grace (``grace``): a job that notices the deadline itself reports its own, more precise,
``DIFF-TIMEOUT``; one still running after the grace, and every job never started, is given
``DIFF-TIMEOUT`` here, and the helper processes the jobs started (kubeconfig exec plugins and what they
forked) are killed. Results come back in job order, whatever order the jobs finished in.

A job's ``RenderError`` is its cluster's failure (its findings, the others go on); any other exception
is a bug, re-raised in the main thread once every job has been waited for (exit 4).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from renderer.childproc import adopt_orphans, end_descendants
from renderer.errors import Finding, RenderError

# How far past the deadline the main thread waits for a job to report its own DIFF-TIMEOUT before it
# reports one itself: 5 % of the deadline, at most half a second (a timeout is reported within 10 %
# of --timeout).
GRACE_FRACTION, GRACE_MAX = 0.05, 0.5
TIMEOUT_CODE = "DIFF-TIMEOUT"


class Deadline:
    """One point in time every request of a command shares (``remaining()`` is what is left of it);
    ``seconds`` is the ``--timeout`` it was made from."""

    def __init__(self, seconds: float, *, since_process_start: bool = False) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds - (_process_age() if since_process_start else 0.0)

    @classmethod
    def for_command(cls, seconds: float) -> Deadline:
        """The deadline of a command's ``--timeout``: counted from the process's start when this process
        is the cozy-render command (its start-up and imports count too), from now for a test or a
        library caller, whose process started long before."""
        return cls(seconds, since_process_start=_is_the_command())

    def remaining(self) -> float:
        return self.end - time.monotonic()


def _is_the_command() -> bool:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return Path(sys.argv[0]).name == "cozy-render" or getattr(spec, "name", "") == "renderer.__main__"


def _process_age() -> float:
    """Seconds since this process started (Linux ``/proc``; elsewhere 0): the interpreter's start-up
    and imports count against ``--timeout`` too."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            started = int(handle.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, min(uptime - started, 60.0))


def grace(seconds: float) -> float:
    """How long past a deadline of ``seconds`` the main thread still waits for the jobs."""
    return min(GRACE_MAX, GRACE_FRACTION * seconds)


class Job(NamedTuple):
    name: str  # the cluster: names the thread and the timeout finding
    work: Callable[[], Any]


class Done(NamedTuple):
    """One job's end: its value, or the findings it failed with (then ``value`` is None)."""

    name: str
    value: Any
    failures: list[Finding]


def timeout_finding(name: str, deadline: Deadline) -> Finding:
    return Finding(TIMEOUT_CODE, f"{name}: no answer within --timeout {deadline.seconds:g}s")


def fan_out(jobs: Sequence[Job], concurrency: int, deadline: Deadline,
            on_done: Callable[[str], None] | None = None) -> list[Done]:
    """Every job's ``Done``, in job order (see the module docstring). ``on_done(name)`` is called, one
    at a time, as each job ends (a progress line)."""
    adopt_orphans()  # an exec plugin that forks and exits leaves its child to us, to be ended with the rest
    ended: dict[int, Done] = {}
    crashed: list[BaseException] = []
    lock = threading.Lock()
    slots = threading.Semaphore(concurrency)
    threads: list[tuple[int, threading.Thread]] = []

    def run(i: int, job: Job) -> None:
        try:
            done = Done(job.name, job.work(), [])
        except RenderError as exc:
            done = Done(job.name, None, list(exc.findings))
        except BaseException as exc:  # noqa: BLE001 - a bug: re-raised in the main thread (exit 4)
            done = Done(job.name, None, [])
            with lock:
                crashed.append(exc)
        finally:
            slots.release()
        with lock:
            ended[i] = done
            if on_done is not None:
                on_done(job.name)

    end = deadline.end + grace(deadline.seconds)
    for i, job in enumerate(jobs):
        if not slots.acquire(timeout=max(0.0, end - time.monotonic())):
            break  # the deadline passed while earlier jobs ran: the rest are timeouts below
        thread = threading.Thread(target=run, args=(i, job), name=f"fanout-{job.name}", daemon=True)
        thread.start()
        threads.append((i, thread))
    for _i, thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
    with lock:
        out = [ended.get(i) or Done(job.name, None, [timeout_finding(job.name, deadline)])
               for i, job in enumerate(jobs)]
        late = len(ended) < len(jobs)
        bug = crashed[0] if crashed else None
    if late:
        end_descendants()  # what a stuck job started must not outlive the command that gave up on it
    if bug is not None:
        raise bug
    return out
