"""The sidecar under load, bounded: concurrent `cmp generate` processes sharing one render cache, started as
argocd-cmp-server starts them (a fresh checkout per request, its environment, its own process group), some
killed part-way. The harness is bench/bench_sidecar.py's (which runs N = 2, 8, 32 over 200 Applications);
here N = 2 and 8 over a fleet with every sample shape twice. Timings are measured there, never asserted here.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import sys

import pytest

from tests.cmp_output import render_objects, split_warnings
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import bench_sidecar

COMMAND = [sys.executable, "-m", "renderer", "cmp", "generate"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("sidecar")
    shapes = len(list((REPO / "overlays" / "clusters").glob("*/cluster.yaml")))
    repo, apps = bench_sidecar.make_fleet(2 * shapes, work)
    serial = bench_sidecar.serial_baseline(bench_sidecar.Sidecar(repo, COMMAND, work / "serial", None, ENV), apps)
    return work, repo, apps, serial


def test_the_serial_baseline_is_what_render_prints(fleet) -> None:
    """The reference bytes are the plain render's objects, plus the warnings Argo CD is shown."""
    import subprocess

    _, repo, apps, serial = fleet
    for app in apps[:: max(1, len(apps) // 4)]:
        render = subprocess.run([sys.executable, "-m", "renderer", "render", f"overlays/clusters/{app}"],
                                cwd=repo, capture_output=True, text=True, env=ENV, check=True)
        objects, _ = split_warnings(serial[app].stdout)
        assert objects == render_objects(render.stdout), app


@pytest.mark.parametrize("concurrency", [2, 8])
def test_concurrent_generates_match_serial_and_leave_whole_entries(fleet, concurrency: int) -> None:
    work, repo, apps, serial = fleet
    # Kills land in the first quarter of a typical render: every request of the cold round renders
    # (its cache entry does not exist yet), so the one killed is always still running. A window as long
    # as the median let a fast request finish first, and the test then saw no kill at all.
    kill_window = statistics.median(r.seconds for r in serial.values()) / 4
    phases, state = bench_sidecar.measure(repo, apps, COMMAND, work / f"n{concurrency}", concurrency, serial,
                                          kill_window, ENV)
    cold, warm = phases
    assert cold.killed >= 1  # some requests really were killed part-way (the rest ran to the end)
    assert cold.requests == len(apps) + cold.killed and warm.requests == len(apps) and warm.killed == 0
    assert cold.mismatched == 0 and warm.mismatched == 0
    assert state.torn == [] and state.entries == len(apps)  # one whole entry per Application


def test_a_killed_writer_never_leaves_a_torn_entry(fleet) -> None:
    """Writers killed at many points of their run (SIGKILL, no chance to clean up): the entries there
    are whole, and the next request for every Application prints the serial bytes."""
    work, repo, apps, serial = fleet
    cache = work / "kill-cache"
    sidecar = bench_sidecar.Sidecar(repo, COMMAND, work / "kill", cache, ENV)
    longest = max(r.seconds for r in serial.values())
    app = apps[0]
    for step in range(8):
        sidecar.generate(app, kill_after=longest * (0.3 + step * 0.12), kill_signal=signal.SIGKILL)
        state = bench_sidecar.inspect_cache(cache, serial)
        assert state.torn == [], step
    again = sidecar.generate(app)
    assert (again.returncode, again.stdout, again.stderr) == (0, serial[app].stdout, serial[app].stderr)


def test_the_check_finds_a_torn_entry(fleet) -> None:
    """The verifier can fail: a truncated entry (what a non-atomic writer would leave) is reported, and the
    renderer treats it as a miss, printing the right bytes."""
    work, repo, apps, serial = fleet
    cache = work / "torn-cache"
    sidecar = bench_sidecar.Sidecar(repo, COMMAND, work / "torn", cache, ENV)
    assert sidecar.generate(apps[1]).returncode == 0
    (entry,) = cache.glob("*.json")
    text = entry.read_text()
    json.loads(text)
    entry.write_text(text[: len(text) // 2])
    assert bench_sidecar.inspect_cache(cache, serial).torn == [entry.name]
    replay = sidecar.generate(apps[1])
    assert (replay.returncode, replay.stdout, replay.stderr) == (0, serial[apps[1]].stdout, serial[apps[1]].stderr)
    assert bench_sidecar.inspect_cache(cache, serial).torn == []  # rewritten whole


def test_a_mismatch_is_counted(fleet) -> None:
    _, _, apps, serial = fleet
    wrong = bench_sidecar.Result(apps[0], 0, serial[apps[0]].stdout + "# extra\n", serial[apps[0]].stderr, 0.1, False)
    killed = bench_sidecar.Result(apps[1], -9, "", "", 0.1, True)
    assert bench_sidecar.mismatches([wrong, killed, serial[apps[2]]], serial) == [apps[0]]
