"""Issue 25 item 4, helm: every helm process runs under documented limits (renderer/effective/helm.py
``bounds``: RLIMIT_CPU, RLIMIT_DATA with GOMEMLIMIT, a wall-clock deadline on the process group, capped
output), and helm's own failure (a limit, a Go runtime crash, a binary that is not helm) is one
located PLT-HELM line at the chart, exit 3, never the chart's error.

A hostile ``--platform-chart`` runs the real helm in a child process measured as
tests/test_invalid_corpus.py measures its cases: the child's CPU time (its reaped helm included, from
``wait4``), not the wall clock, within 5 s, and a peak RSS within 500 MiB. The child has no
``RLIMIT_AS``: Go reserves about 800 MiB of address space at start, so the corpus's 500 MiB address
limit stops helm before it reads the chart (that case is the last test here).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import OVERLAYS, REPO

CPU_SECONDS = 5.0
MEMORY_BYTES = 500 * 2**20
LINE = re.compile(r"^(?P<where>.+/Chart\.yaml:1:1): error\[PLT-HELM\]: (?P<message>\S.*)$")

HOSTILE = {
    # `until` builds a list of 10^8 ints (800 MB) before the loop starts
    "huge-list": "{{- range until 100000000 }}x{{ end }}",
    # 4*10^8 iterations that allocate little: only the CPU limit stops it
    "endless-loop": "{{- range $i := until 20000 }}{{- range $j := until 20000 }}{{ end }}{{ end }}",
    # a string doubling past any memory
    "huge-string": "{{- $s := \"xxxxxxxxxxxxxxxx\" }}{{- range until 40 }}{{- $s = repeat 2 $s }}{{ end }}{{ $s }}",
    # printf building ever longer strings
    "printf-growth": "{{- $s := \"x\" }}{{- range until 60 }}{{- $s = printf \"%s%s\" $s $s }}{{ end }}",
}



def _chart(root: Path, template: str) -> Path:
    chart = root / "hostile-chart"
    (chart / "templates" / "bundles").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: hostile\nversion: 0.0.0\n")
    for values in ("values.yaml", "values-isp-full.yaml", "values-isp-hosted.yaml", "values-isp-full-generic.yaml"):
        (chart / values).write_text("{}\n")
    # templates/bundles/ is what effective renders (helm.OFFLINE_TEMPLATES)
    (chart / "templates" / "bundles" / "hostile.yaml").write_text(template + "\n")
    return chart


def _run(args: list[str], cwd: Path, address_limit: int | None = None) -> tuple[int, str, str, float, int]:
    """cozy-render in a child, as the invalid corpus runs it: (exit, stdout, stderr, CPU s, peak RSS)."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (int(CPU_SECONDS) * 2, int(CPU_SECONDS) * 2))
        if address_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_limit, address_limit))

    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    out, err = cwd / "out", cwd / "err"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "renderer", *args], cwd=cwd, env=env, stdout=stdout,
                                stderr=stderr, stdin=subprocess.DEVNULL, preexec_fn=limit)
        start = time.monotonic()
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > CPU_SECONDS * 3:
                proc.kill()
                proc.wait()
                pytest.fail(f"still running after {CPU_SECONDS * 3} s")
            time.sleep(0.01)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (proc.returncode, out.read_text(), err.read_text(), rusage.ru_utime + rusage.ru_stime,
            rusage.ru_maxrss * 1024)


def _errors(stderr: str) -> list[str]:
    """The error lines (the sample's own warnings come first, as with any effective run)."""
    return [line for line in stderr.splitlines() if ": warning[" not in line]


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(OVERLAYS, root)
    (root / ".git").mkdir()
    return root


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_platform_chart_is_stopped_within_the_budget_as_plt_helm(
        helm: str, cluster: Path, tmp_path: Path, name: str) -> None:
    chart = _chart(tmp_path, HOSTILE[name])
    code, out, err, cpu, rss = _run(["effective", "clusters/gpu-apt-01", "--platform-chart", str(chart),
                                     "--helm", helm], cluster)
    assert code == 3 and out == "", err
    (line,) = _errors(err)
    found = LINE.match(line)
    assert found, line
    assert found["where"] == f"{chart}/Chart.yaml:1:1"
    assert re.search(r"CPU limit|ran out of memory|more than \d+ MiB", found["message"]), line
    assert cpu <= CPU_SECONDS, f"took {cpu:.1f} s of CPU"
    assert rss <= MEMORY_BYTES, f"peak RSS {rss // 2**20} MiB"


def test_helm_that_cannot_start_under_an_address_limit_is_plt_helm_not_the_charts_error(
        helm: str, cluster: Path) -> None:
    """Under the invalid corpus's 500 MiB RLIMIT_AS, the Go runtime dies before it reads the chart with
    a stack dump; that was reported as the chart's error, and is now helm's own (PLT-HELM)."""
    code, out, err, cpu, _ = _run(["effective", "clusters/gpu-apt-01", "--helm", helm], cluster,
                                  address_limit=MEMORY_BYTES)
    assert code == 3 and out == "", err
    (line,) = _errors(err)
    # before any chart is read (`helm version` already dies): not located in a file
    assert line.startswith("error[PLT-HELM]: ") and "ran out of memory" in line and "RLIMIT_AS" in line, line
    assert "goroutine" not in err and "runtime." not in err  # one line, no stack frame
    assert cpu <= CPU_SECONDS


def test_a_binary_that_is_not_helm_is_plt_helm(cluster: Path, tmp_path: Path) -> None:
    fake = tmp_path / "helm"
    fake.write_text("#!/bin/sh\necho 'some-tool 1.0'\n")  # answers anything, renders nothing
    fake.chmod(0o755)
    code, out, err, _, _ = _run(["effective", "clusters/gpu-apt-01", "--helm", str(fake)], cluster)
    assert code == 3 and out == ""
    (line,) = _errors(err)
    assert line.startswith("error[PLT-HELM]: ") and "is not helm 3 or 4" in line, line


def test_a_go_crash_while_rendering_is_helm_failure_not_a_chart_failure(tmp_path: Path) -> None:
    """A helm that answers `version` and then crashes while rendering (as under a memory cap)."""
    from renderer.effective.helm import HelmFailure, render_platform
    from renderer.platform_chart import chart_dir

    fake = tmp_path / "helm"
    fake.write_text("#!/bin/sh\necho 'fatal error: runtime: out of memory' >&2\n"
                    "echo 'goroutine 1 gp=0xc0000061c0 m=0 [running]:' >&2\necho 'Error: not this' >&2\nexit 2\n")
    fake.chmod(0o755)
    with pytest.raises(HelmFailure, match="ran out of memory"):
        render_platform(str(fake), chart_dir("v1.6.2"), "isp-full", {})


def test_output_past_the_cap_stops_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer.effective import helm as helm_module

    monkeypatch.setattr(helm_module, "OUTPUT_BYTES", 2**20)
    fake = tmp_path / "helm"
    fake.write_text("#!/bin/sh\nexec yes 'a: b'\n")
    fake.chmod(0o755)
    with pytest.raises(helm_module.HelmFailure, match="more than 1 MiB to stdout"):
        helm_module.render_platform(str(fake), helm_module.Path(REPO / "renderer" / "platform_chart" / "charts"
                                                                / "v1.6.2"), "isp-full", {})


def test_the_wall_clock_deadline_kills_helm_and_its_children(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer.effective import helm as helm_module

    monkeypatch.setattr(helm_module, "TIMEOUT_SECONDS", 1)
    marker = tmp_path / "child.pid"
    fake = tmp_path / "helm"
    fake.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {marker}\nwait\n")
    fake.chmod(0o755)
    with pytest.raises(helm_module.HelmFailure, match=r"time limit \(1 s\)"):
        helm_module.render_platform(str(fake), REPO / "renderer" / "platform_chart" / "charts" / "v1.6.2",
                                    "isp-full", {})
    child = int(marker.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text().lower() \
        or " Z " in Path(f"/proc/{child}/stat").read_text()


def test_the_bounds_are_the_documented_ones() -> None:
    from renderer.effective import helm as helm_module

    one, batch = helm_module.bounds(1), helm_module.bounds(helm_module.BATCH)
    assert (one.cpu_seconds, one.timeout, one.data_bytes, one.output_bytes) == (3, 60, 256 * 2**20, 64 * 2**20)
    assert batch.cpu_seconds == 7  # 3 s + 0.1 s for each further cluster of a batch of 40
    security = (REPO / "SECURITY.md").read_text()
    for text in ("helm", "3 s of CPU", "256 MiB", "GOMEMLIMIT=192MiB", "60 s", "64 MiB"):
        assert text in security, text
