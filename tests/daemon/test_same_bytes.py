"""Through the resident renderer, ``cmp generate`` prints the bytes an in-process run prints: stdout,
stderr and exit code, for every sample overlay, a refused overlay and the plugin's parameter cases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.commands.test_cmp import _cmp_server_env
from tests.conftest import OVERLAYS
from tests.daemon.conftest import base_env, generate

CLUSTERS = sorted(p.name for p in (OVERLAYS / "clusters").iterdir())

# (name, extra environment): the CMP cases of tests/commands/test_cmp.py, argocd-cmp-server's variables.
CASES = [
    ("null-parameters", {}),
    ("vars", {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "vars", "map": {"domain": "override.example"}}])}),
    ("unknown-parameter", {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "colour", "string": "x"}])}),
    ("kubernetes-version", {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "kubernetes-version", "string": "1.30"}])}),
    ("kube-version-out-of-range", {"KUBE_VERSION": "1.99.0"}),
    ("strict-env-entry", {"ARGOCD_ENV_strict": "true"}),
    ("bad-env-entry", {"ARGOCD_ENV_strict": "maybe"}),
]


def test_every_sample_overlay_is_the_same_through_the_daemon(start_daemon, samples: Path) -> None:
    daemon = start_daemon()
    env = base_env()
    for name in CLUSTERS:
        app = samples / "clusters" / name
        request = {**env, **_cmp_server_env(app, f"clusters/{name}")}
        in_process = generate(app, request)
        served_before = daemon.served()
        through = generate(app, request, daemon.socket)
        assert daemon.served() == served_before + 1, daemon.log_text()  # a worker ran it, no silent fallback
        assert in_process.returncode == 0, (name, in_process.stderr)
        assert in_process.stdout.startswith(b"apiVersion:")
        assert through == in_process, name


@pytest.mark.parametrize("case", [name for name, _ in CASES])
def test_cmp_parameter_cases_are_the_same_through_the_daemon(start_daemon, samples: Path, case: str) -> None:
    daemon = start_daemon()
    extra = dict(CASES)[case]
    app = samples / "clusters" / "gpu-apt-01"
    request = {**base_env(), **_cmp_server_env(app, "clusters/gpu-apt-01"), **extra}
    in_process = generate(app, request)
    through = generate(app, request, daemon.socket)
    assert daemon.served() == 1, daemon.log_text()
    assert through == in_process
    if case in ("unknown-parameter", "bad-env-entry"):
        assert in_process.returncode == 3 and in_process.stdout == b"" and b"error[CMP-" in in_process.stderr


def test_a_refused_overlay_is_the_same_through_the_daemon(start_daemon, tmp_path: Path) -> None:
    daemon = start_daemon()
    app = tmp_path / "repo" / "clusters" / "c1"
    app.mkdir(parents=True)
    (app / "cluster.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
                                      "metadata: {name: c1}\nhost: {os: apt}\nplatform: {variant: 1}\n")
    in_process = generate(app, base_env())
    through = generate(app, base_env(), daemon.socket)
    assert daemon.served() == 1
    assert in_process.returncode == 3 and in_process.stdout == b""
    assert b"cluster.yaml:5:21: error[OVL-SCHEMA]: platform.variant must be a string" in in_process.stderr
    assert through == in_process


def test_the_stream_encodings_travel_with_the_request(start_daemon, samples: Path) -> None:
    """Messages keep the client's stderr encoding (PYTHONIOENCODING): what it cannot show is escaped."""
    daemon = start_daemon()
    app = samples / "clusters" / "gpu-apt-01"
    request = {**base_env(), **_cmp_server_env(app, "clusters/gpu-apt-01"), "PYTHONIOENCODING": "ascii",
               "ARGOCD_APP_PARAMETERS": json.dumps([{"name": "colour\u00e9", "string": "x"}], ensure_ascii=False)}
    in_process = generate(app, request)
    through = generate(app, request, daemon.socket)
    assert daemon.served() == 1
    assert in_process.returncode == 3 and b"\\xe9" in in_process.stderr
    assert through == in_process


def test_other_interpreter_options_render_in_process(start_daemon, samples: Path) -> None:
    """LC_ALL=C turns on the interpreter's UTF-8 mode (PEP 540): a worker forked from a server without it
    could differ, so the server refuses and the client renders in-process, silently."""
    daemon = start_daemon()
    app = samples / "clusters" / "gpu-apt-01"
    request = {**base_env(), **_cmp_server_env(app, "clusters/gpu-apt-01"), "LC_ALL": "C"}
    in_process = generate(app, request)
    through = generate(app, request, daemon.socket)
    assert daemon.served() == 0
    assert in_process.returncode == 0 and through == in_process


def test_a_stdout_that_cannot_take_the_output_is_the_same_refusal(start_daemon, samples: Path) -> None:
    """The worker writes the client's own stdout: /dev/full answers ENOSPC there too (OUT-STREAM, exit 3)."""
    daemon = start_daemon()
    app = samples / "clusters" / "gpu-apt-01"
    request = {**base_env(), **_cmp_server_env(app, "clusters/gpu-apt-01")}
    outcomes = []
    for socket_path in (None, daemon.socket):
        env = dict(request)
        if socket_path is not None:
            env["COZY_RENDER_DAEMON_SOCKET"] = str(socket_path)
        with open("/dev/full", "wb") as full:
            done = subprocess.run([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=app, env=env,
                                  stdout=full, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
        outcomes.append((done.returncode, done.stderr))
    assert daemon.served() == 1
    assert outcomes[0][0] == 3 and b"error[OUT-STREAM]" in outcomes[0][1]
    assert outcomes[1] == outcomes[0]
