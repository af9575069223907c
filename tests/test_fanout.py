"""``renderer.fanout``: the one bounded thread runner ``diff`` and ``doctor`` read clusters through.

Jobs here are plain functions synchronised by events, never by sleeps that a slow machine could
outrun; the one child-process test bounds ``subprocess.run`` for liveness only (no timing assertion).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from renderer.errors import Finding, RenderError
from renderer.fanout import Deadline, Job, fan_out, grace


def test_results_come_back_in_job_order_whatever_order_they_finish_in() -> None:
    second_done = threading.Event()

    def first() -> str:
        assert second_done.wait(30)
        return "a"

    def second() -> str:
        second_done.set()
        return "b"

    done = fan_out([Job("one", first), Job("two", second)], 2, Deadline(60))
    assert [(d.name, d.value, d.failures) for d in done] == [("one", "a", []), ("two", "b", [])]


def test_at_most_concurrency_jobs_run_at_once() -> None:
    lock = threading.Lock()
    running = [0]
    peak = [0]
    both = threading.Barrier(2, timeout=30)

    def job() -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        both.wait()  # two are in flight together (a third would wait for a slot, never for the barrier)
        with lock:
            running[0] -= 1

    done = fan_out([Job(str(i), job) for i in range(6)], 2, Deadline(60))
    assert len(done) == 6 and all(not d.failures for d in done)
    assert peak[0] == 2


def test_a_failing_job_is_its_own_failure_and_the_others_go_on() -> None:
    def fails() -> None:
        raise RenderError([Finding("DIFF-LIVE", "two: 403 Forbidden")], 3)

    done = fan_out([Job("one", lambda: 1), Job("two", fails), Job("three", lambda: 3)], 1, Deadline(60))
    assert [d.value for d in done] == [1, None, 3]
    assert [f.code for f in done[1].failures] == ["DIFF-LIVE"]


def test_a_bug_in_a_job_is_raised_in_the_caller_after_the_others_finish() -> None:
    finished = []

    def bug() -> None:
        raise ZeroDivisionError("a bug")

    with pytest.raises(ZeroDivisionError):
        fan_out([Job("one", bug), Job("two", lambda: finished.append("two"))], 2, Deadline(60))
    assert finished == ["two"]


def test_a_job_that_notices_the_deadline_reports_its_own_timeout() -> None:
    deadline = Deadline(0.2)

    def careful() -> None:
        while deadline.remaining() > 0:
            time.sleep(0.01)
        raise RenderError([Finding("DIFF-TIMEOUT", "one: list Pod: no answer within --timeout 0.2s")], 3)

    (done,) = fan_out([Job("one", careful)], 1, deadline)
    assert [f.message for f in done.failures] == ["one: list Pod: no answer within --timeout 0.2s"]


def test_a_stuck_job_and_the_jobs_never_started_are_timeouts() -> None:
    release = threading.Event()
    started = []

    def stuck() -> None:
        release.wait(60)

    try:
        done = fan_out([Job("one", stuck), Job("two", lambda: started.append("two"))], 1, Deadline(0.2))
        assert not release.is_set()  # the runner returned while the job still ran
    finally:
        release.set()
    assert [(d.name, [(f.code, f.message) for f in d.failures]) for d in done] == [
        ("one", [("DIFF-TIMEOUT", "one: no answer within --timeout 0.2s")]),
        ("two", [("DIFF-TIMEOUT", "two: no answer within --timeout 0.2s")])]
    assert started == []


def test_the_grace_is_a_twentieth_of_the_deadline_at_most_half_a_second() -> None:
    assert grace(2) == pytest.approx(0.1)
    assert grace(60) == 0.5


def test_the_deadline_of_a_library_caller_counts_from_now() -> None:
    deadline = Deadline.for_command(30)  # pytest is not the cozy-render command
    assert 29 < deadline.remaining() <= 30


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="helper processes are found through /proc")
def test_a_stuck_job_cannot_keep_the_process_alive_nor_its_helper(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    script = textwrap.dedent(f"""
        import subprocess, threading
        from renderer.fanout import Deadline, Job, fan_out

        def stuck():
            helper = subprocess.Popen(["sleep", "300"])  # an exec plugin that hangs
            open({str(pid_file)!r}, "w").write(str(helper.pid))
            threading.Event().wait()

        (done,) = fan_out([Job("one", stuck)], 1, Deadline(1))
        print(done.failures[0].code)
    """)
    # 30 s: far past the 1 s deadline; a process alive then was held by the stuck thread
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert (finished.returncode, finished.stdout) == (0, "DIFF-TIMEOUT\n"), finished.stderr
    helper = int(pid_file.read_text())
    for _ in range(50):
        if not Path(f"/proc/{helper}").exists() or "Z" in Path(f"/proc/{helper}/stat").read_text().split()[2]:
            break
        time.sleep(0.1)
    else:
        os.kill(helper, 9)
        pytest.fail("the stuck job's helper process outlived the runner")
