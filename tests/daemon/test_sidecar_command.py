"""The sidecar's command as docs/argocd ships it starts the resident renderer beside argocd-cmp-server
(here a stand-in that asks the daemon for one Application and then stops it)."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

from tests.commands.test_cmp import _cmp_server_env
from tests.conftest import REPO
from tests.daemon.conftest import (
    RUN_SECONDS,
    START_SECONDS,
    base_env,
    generate,
    nothing_names,
    processes_naming,
    wait_until,
)

SIDECAR = REPO / "docs" / "argocd" / "install" / "repo-server-sidecar.yaml"
CMP_SERVER = "/var/run/argocd/argocd-cmp-server"

# Stands in for argocd-cmp-server: waits for the socket, runs one request through the client the entry
# point uses (None: not served), then stops its child, the daemon, as the pod's end would.
STAND_IN = r"""
import os, signal, subprocess, sys, time
socket_path = os.environ["COZY_RENDER_DAEMON_SOCKET"]
end = time.monotonic() + float(sys.argv[1])
while not os.path.exists(socket_path) and time.monotonic() < end:
    time.sleep(0.05)
probe = ("import os, sys; sys.argv = ['cozy-render', 'cmp', 'generate']; "
         "from renderer.daemon.client import delegate; "
         "code = delegate(os.environ['COZY_RENDER_DAEMON_SOCKET']); "
         "sys.exit(99 if code is None else code)")
done = subprocess.run([sys.executable, "-c", probe], cwd=sys.argv[2], capture_output=True, timeout=120)
with open(sys.argv[3], "wb") as out:
    out.write(b"%d\n" % done.returncode + done.stdout)
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                parent = int(handle.read().rpartition(b")")[2].split()[1])
        except OSError:
            continue
        if parent == os.getpid():
            os.kill(int(entry), signal.SIGTERM)
            os.waitpid(int(entry), 0)
"""


def test_the_documented_sidecar_command_serves_cmp_generate(samples: Path, tmp_path: Path) -> None:
    sidecar = YAML(typ="safe").load(SIDECAR.read_text())["spec"]["template"]["spec"]["containers"][0]
    shell, flag, script = sidecar["command"]
    env_entries = {e["name"]: e["value"] for e in sidecar["env"]}
    assert env_entries["COZY_RENDER_DAEMON_SOCKET"].startswith("/tmp/")  # the sidecar's own emptyDir
    stand_in = tmp_path / "argocd-cmp-server"
    stand_in.write_text(STAND_IN)
    app = samples / "clusters" / "gpu-apt-01"
    result = tmp_path / "result"
    command = script.replace(CMP_SERVER, f"{sys.executable} {stand_in} {START_SECONDS} {app} {result}")
    env = {**base_env(), **_cmp_server_env(app, "clusters/gpu-apt-01"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "COZY_RENDER_DAEMON_SOCKET": str(tmp_path / "cozy-render-daemon" / "daemon.sock"),
           "TMPDIR": str(tmp_path)}
    try:
        done = subprocess.run([shell, flag, command], env=env, capture_output=True,
                              timeout=START_SECONDS + RUN_SECONDS)
    finally:  # a stand-in that failed leaves its daemon: stop it (and its workers) by its socket's path
        for pid in processes_naming(env["COZY_RENDER_DAEMON_SOCKET"]):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        assert wait_until(functools.partial(nothing_names, env["COZY_RENDER_DAEMON_SOCKET"]), 30)
    assert done.returncode == 0, done.stderr
    code, _, stdout = result.read_bytes().partition(b"\n")
    in_process = generate(app, {k: v for k, v in env.items() if k != "COZY_RENDER_DAEMON_SOCKET"})
    assert int(code) == 0 and stdout == in_process.stdout  # 99 would be "not served"
    assert b"cozy-render daemon: serving" in done.stderr
    assert not (tmp_path / "cozy-render-daemon" / "daemon.sock").exists()  # stopped cleanly
