"""``--timeout`` means the command has returned by then, and nothing it started outlives it (issue 34
item 3): an API server dripping one byte at a time, and a kubeconfig exec plugin that forks a child
and hangs. Each runs the real console entry in a child process (only there is the process's own end
observable); the bound given to ``subprocess.run`` is a liveness bound far past --timeout, not a timing
assertion."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.diff.helpers import overlays_repo, real_cluster, render_objects
from tests.kubefake import KubeFake, kubeconfig

pytestmark = pytest.mark.loopback

CLUSTER = "gpu-apt-01"


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "COZY_RENDER"))}
    env["TMPDIR"] = str(tmp)
    return env


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    scratch = tmp_path / "tmpdir"
    scratch.mkdir(exist_ok=True)
    # 20 s: a process still alive then was held by a thread or a child past --timeout 2 (the drip lasts 60 s)
    return subprocess.run([sys.executable, "-c", "from renderer.entry import main; main()", *args],
                          capture_output=True, text=True, env=_env(scratch), timeout=20)


def _gone(pid: int) -> bool:
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]:
            return True
        time.sleep(0.1)
    os.kill(pid, 9)
    return False


def test_a_dripping_body_is_a_timeout_and_the_process_returns(kube_fake: KubeFake, tmp_path: Path) -> None:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / CLUSTER
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    kube_fake.drip(r"^GET /apis/cozystack.io/v1alpha1/packages$")  # a list: read in the pool
    kc = kube_fake.kubeconfig(tmp_path / "kc", [CLUSTER])
    done = _run(["diff", str(cluster_dir), "--kubeconfig", str(kc), "--timeout", "2"], tmp_path)
    assert (done.returncode, done.stdout) == (3, ""), done.stderr
    assert done.stderr.startswith("error[DIFF-TIMEOUT]: ") and done.stderr.count("\n") == 1, done.stderr


def test_an_exec_plugins_forked_child_is_ended_with_it(kube_fake: KubeFake, tmp_path: Path) -> None:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / CLUSTER
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    pids = tmp_path / "pids"
    plugin = tmp_path / "plugin.sh"
    # the child detaches into its own session and the plugin itself hangs: neither may outlive the diff
    plugin.write_text(f"#!/bin/sh\nsetsid sleep 300 </dev/null >/dev/null 2>&1 &\necho $! >> {pids}\n"
                      f"echo $$ >> {pids}\nexec sleep 300\n")
    plugin.chmod(0o755)
    kc = kubeconfig(tmp_path / "kc-exec", {CLUSTER: kube_fake})
    kc.write_text(kc.read_text().replace('"user": {}', '"user": {"exec": {"apiVersion": '
                                         '"client.authentication.k8s.io/v1", '
                                         f'"command": "{plugin}", "interactiveMode": "Never"}}}}'))
    done = _run(["diff", str(cluster_dir), "--kubeconfig", str(kc), "--timeout", "3"], tmp_path)
    assert done.returncode == 3 and done.stderr.startswith("error[DIFF-TIMEOUT]: "), done.stderr
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2, "the exec plugin never ran"
    assert all(_gone(pid) for pid in started), "a process the exec plugin started outlived the diff"
