"""The resident renderer's guarantees, each against a real server in a subprocess: the socket is the
plugin user's alone, a killed or late worker ends its request with a coded line (never a hang) and
leaves nothing behind, a stale socket or a server of other code is no server, and requests at once
all get their own right answer."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from renderer.daemon import protocol
from renderer.daemon.client import request_fields
from renderer.daemon.server import peer_allowed, peer_uid
from tests.commands.test_cmp import _cmp_server_env
from tests.conftest import OVERLAYS
from tests.daemon.conftest import RUN_SECONDS, base_env, children_of, generate, processes_naming, wait_until

APP_NAME = "gpu-apt-01"


def app_env(samples: Path, name: str = APP_NAME) -> tuple[Path, dict[str, str]]:
    app = samples / "clusters" / name
    return app, {**base_env(), **_cmp_server_env(app, f"clusters/{name}")}


def hanging_helm(tmp_path: Path, marker: str) -> dict[str, str]:
    """The plugin's `chart: helm` judge with a helm that never answers (``sleep MARKER``)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    (folder / "helm").write_text(f"#!/bin/sh\nexec sleep {marker}\n")
    (folder / "helm").chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}", "ARGOCD_ENV_chart": "helm"}


def ask(socket_path: Path, fields: list[bytes]) -> tuple[bytes, bytes]:
    """Send a request as the client would (our own descriptors) and read the first reply."""
    cwd = os.open(".", os.O_RDONLY)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(RUN_SECONDS)
            sock.connect(str(socket_path))
            # refused before the request was read (another uid): the refusal is there to read all the same
            with contextlib.suppress(BrokenPipeError):
                socket.send_fds(sock, [protocol.pack(fields)], [cwd, 0, 1, 2])
            return protocol.read_frame(sock)
    finally:
        os.close(cwd)


# -- who may connect -------------------------------------------------------------------------------


def test_the_peer_check_reads_the_connecting_uid() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert peer_uid(left) == os.geteuid()
        assert peer_allowed(left, os.geteuid())
        assert not peer_allowed(left, os.geteuid() + 1)  # what a client of another uid looks like


def test_the_socket_and_its_folder_are_the_users_alone(start_daemon) -> None:
    daemon = start_daemon()
    assert daemon.socket.stat().st_mode & 0o777 == 0o600
    assert daemon.socket.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="switching uid needs root")
def test_a_client_of_another_uid_is_refused_even_through_open_permissions(start_daemon) -> None:
    base = Path(tempfile.mkdtemp(prefix="cozy-render-peer-"))  # tmp_path's parents are closed to other uids
    try:
        base.chmod(0o711)
        daemon = start_daemon(socket=base / "run" / "daemon.sock")
        daemon.socket.parent.chmod(0o711)  # a mistake an operator could make: SO_PEERCRED still holds
        daemon.socket.chmod(0o666)
        answer = _ask_as_nobody(daemon.socket)
        assert answer == b"Ranother uid"
        assert daemon.served() == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _ask_as_nobody(socket_path: Path) -> bytes:
    fields = request_fields()
    assert fields is not None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir("/")
            os.setgid(65534)
            os.setuid(65534)
            tag, why = ask(socket_path, fields)
            os.write(write, tag + why)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which asserts
            os.write(write, repr(exc).encode())
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 1000)
    os.close(read)
    os.waitpid(pid, 0)
    return answer


def test_a_folder_open_to_others_is_refused(start_daemon, tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    daemon = start_daemon(socket=folder / "daemon.sock", wait=False)
    assert daemon.proc.wait(timeout=RUN_SECONDS) == 3
    assert "error[CMP-DAEMON]: the socket folder" in daemon.log_text() and "it must be 0700" in daemon.log_text()


def test_one_server_per_socket(start_daemon) -> None:
    first = start_daemon()
    second = start_daemon(socket=first.socket, wait=False)
    assert second.proc.wait(timeout=RUN_SECONDS) == 3
    assert f"error[CMP-DAEMON]: another cozy-render daemon serves {first.socket}" in second.log_text()
    assert first.proc.poll() is None and first.socket.is_socket()


# -- no server, a stale one, another version ------------------------------------------------------------


def test_without_a_socket_the_client_renders_in_process(samples: Path, tmp_path: Path) -> None:
    app, env = app_env(samples)
    assert generate(app, env, tmp_path / "nowhere" / "daemon.sock") == generate(app, env)


def test_a_stale_socket_is_no_server_and_a_new_server_replaces_it(start_daemon, samples: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    stale = folder / "daemon.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(stale))  # its server died: the file stays, nobody listens
    app, env = app_env(samples)
    in_process = generate(app, env)
    assert generate(app, env, stale) == in_process  # ECONNREFUSED: silently in-process
    daemon = start_daemon(socket=stale)
    assert generate(app, env, stale) == in_process
    assert daemon.served() == 1


def test_a_client_of_another_version_is_refused(start_daemon) -> None:
    daemon = start_daemon()
    fields = request_fields()
    assert fields is not None
    assert ask(daemon.socket, [fields[0], b"0.0.1", *fields[2:]]) == (b"R", b"another cozy-render version or installation")
    assert ask(daemon.socket, [fields[0], fields[1], b"/elsewhere/renderer", *fields[3:]])[0] == b"R"
    assert ask(daemon.socket, [b"something-else/9", *fields[1:]]) == (b"R", b"another protocol")
    assert daemon.served() == 0


@pytest.mark.parametrize("safe_path", ["", "1"], ids=["plain", "PYTHONSAFEPATH"])
def test_an_upgrade_is_never_served_by_old_code(start_daemon, samples: Path, tmp_path: Path,
                                                package_copy: Path, safe_path: str) -> None:
    """The package the server imported changes on disk: the request is refused (rendered in-process,
    the same bytes), the server re-executes itself under the same pid, and serves the new code. Under
    PYTHONSAFEPATH the folder on PYTHONPATH leads sys.path (no script folder before it), and a library
    upgraded there is still seen."""
    installed = tmp_path / "site"  # a copy of its own: this test changes it
    shutil.copytree(package_copy, installed)
    env = {k: v for k, v in base_env(installed).items() if k != "PYTHONSAFEPATH"}
    if safe_path:
        env["PYTHONSAFEPATH"] = safe_path
    daemon = start_daemon(env=env)
    app, request = app_env(samples)
    request = {k: v for k, v in request.items() if k != "PYTHONSAFEPATH"}
    request.update({k: v for k, v in env.items() if k in ("PYTHONPATH", "PYTHONSAFEPATH")})
    in_process = generate(app, request)
    assert in_process.returncode == 0, in_process.stderr
    assert generate(app, request, daemon.socket) == in_process and daemon.served() == 1
    changed = installed / "renderer" / "cmp.py"
    changed.write_text(changed.read_text().replace('"""', '"""Upgraded. ', 1))
    assert generate(app, request, daemon.socket) == in_process
    assert daemon.served() == 1  # refused: rendered in-process
    assert wait_until(lambda: daemon.log_text().count("serving") == 2 and daemon.socket.is_socket(), RUN_SECONDS)
    assert daemon.proc.poll() is None  # the same process, re-executed
    assert generate(app, request, daemon.socket) == in_process
    assert daemon.served() == 2
    (installed / "somelib-2.0.dist-info").mkdir()  # a library upgraded in place, beside the package
    assert generate(app, request, daemon.socket) == in_process
    assert daemon.served() == 2  # refused again: rendered in-process
    assert wait_until(lambda: daemon.log_text().count("serving") == 3 and daemon.socket.is_socket(), RUN_SECONDS)


# -- workers that die, hang, or lose their client --------------------------------------------------------


def test_a_killed_worker_ends_its_request_with_a_coded_line(start_daemon, samples: Path, tmp_path: Path) -> None:
    daemon = start_daemon()
    app, env = app_env(samples)
    env.update(hanging_helm(tmp_path, "71.3"))
    client = subprocess.Popen([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=app, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**env, "COZY_RENDER_DAEMON_SOCKET": str(daemon.socket)})
    try:
        assert wait_until(lambda: bool(processes_naming("71.3")), RUN_SECONDS)  # the worker waits on helm
        (worker,) = daemon.workers()
        os.kill(worker, signal.SIGKILL)
        out, err = client.communicate(timeout=RUN_SECONDS)
    finally:
        client.kill()
        client.wait()
    assert client.returncode == 4 and out == b""
    assert err.decode().splitlines()[-1] == "error[CMP-WORKER]: the render worker was killed by signal 9 (SIGKILL)"
    assert wait_until(lambda: not processes_naming("71.3"), 10)  # its helm (a session of its own) too
    assert wait_until(lambda: not daemon.workers(), 10)
    healthy, plain = app_env(samples)
    assert generate(healthy, plain, daemon.socket) == generate(healthy, plain)  # the server carries on


def test_a_worker_past_the_deadline_is_stopped(start_daemon, samples: Path, tmp_path: Path) -> None:
    daemon = start_daemon("--deadline", "3")
    app, env = app_env(samples)
    env.update(hanging_helm(tmp_path, "72.3"))
    through = generate(app, env, daemon.socket)
    assert through.returncode == 3 and through.stdout == b""
    assert through.stderr.decode().splitlines()[-1] == \
        "error[CMP-DEADLINE]: the render did not finish within 3 s and was stopped"
    assert wait_until(lambda: not processes_naming("72.3"), 10)
    assert wait_until(lambda: not daemon.workers(), 10)


def test_a_client_that_hangs_up_takes_its_worker_along(start_daemon, samples: Path, tmp_path: Path) -> None:
    """argocd-cmp-server kills a generate past its timeout: nobody is left to read, the worker goes."""
    daemon = start_daemon()
    app, env = app_env(samples)
    env.update(hanging_helm(tmp_path, "73.3"))
    client = subprocess.Popen([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=app, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**env, "COZY_RENDER_DAEMON_SOCKET": str(daemon.socket)})
    try:
        assert wait_until(lambda: bool(processes_naming("73.3")), RUN_SECONDS)
    finally:
        client.kill()
        client.wait()
    assert wait_until(lambda: not daemon.workers() and not processes_naming("73.3"), 10)


def test_the_server_stops_its_workers_and_tells_their_clients(start_daemon, samples: Path, tmp_path: Path) -> None:
    daemon = start_daemon()
    app, env = app_env(samples)
    env.update(hanging_helm(tmp_path, "74.3"))
    client = subprocess.Popen([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=app, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**env, "COZY_RENDER_DAEMON_SOCKET": str(daemon.socket)})
    try:
        assert wait_until(lambda: bool(processes_naming("74.3")), RUN_SECONDS)
        assert daemon.stop() == 0
        out, err = client.communicate(timeout=RUN_SECONDS)
    finally:
        client.kill()
        client.wait()
    assert client.returncode == 4 and out == b""
    assert b"error[CMP-WORKER]: the resident renderer stopped before the render finished" in err
    assert not daemon.socket.exists()
    assert wait_until(lambda: not processes_naming("74.3"), 10)


# -- many at once ------------------------------------------------------------------------------------


def test_twenty_requests_at_once_each_get_their_own_answer(start_daemon, samples: Path, tmp_path: Path) -> None:
    daemon = start_daemon()
    names = sorted(p.name for p in (OVERLAYS / "clusters").iterdir())
    expected = {}
    for name in names:
        app, env = app_env(samples, name)
        expected[name] = generate(app, env)
    clients = []
    try:
        for i in range(20):
            name = names[i % len(names)]
            app, env = app_env(samples, name)
            env["COZY_RENDER_DAEMON_SOCKET"] = str(daemon.socket)
            clients.append((name, subprocess.Popen([sys.executable, "-m", "renderer", "cmp", "generate"], cwd=app,
                                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                   stderr=subprocess.PIPE, env=env)))
        for name, client in clients:
            out, err = client.communicate(timeout=RUN_SECONDS)
            assert (client.returncode, out, err) == tuple(expected[name]), name
    finally:
        for _, client in clients:
            client.kill()
            client.wait()
    assert daemon.served() == 20
    server = daemon.proc.pid
    assert daemon.stop() == 0
    assert not children_of(server)
    assert sorted(p.name for p in daemon.socket.parent.iterdir()) == ["daemon.sock.lock"]
    assert list((tmp_path / "server-tmp").iterdir()) == []  # the warm-up's sample is gone


def test_a_finished_worker_leaves_nothing_behind(start_daemon, samples: Path, tmp_path: Path) -> None:
    """The client is answered once the worker's output is complete, before the worker is reaped; nothing
    the render started (a helm that leaves a background child) outlives the request, and the answer is
    the in-process one."""
    daemon = start_daemon()
    app, env = app_env(samples)
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "helm").write_text("#!/bin/sh\nsleep 75.3 </dev/null >/dev/null 2>&1 &\necho 'Error: no chart' >&2\n"
                                 "exit 1\n")
    (folder / "helm").chmod(0o755)
    env.update({"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}", "ARGOCD_ENV_chart": "helm"})
    try:
        served = generate(app, env, daemon.socket)
        assert served.returncode == 3 and served.stdout == b"", served
        assert served == generate(app, env)
        assert daemon.served() == 1, daemon.log_text()
        assert wait_until(lambda: not processes_naming("75.3"), 10)
        assert wait_until(lambda: not daemon.workers(), 10)
    finally:
        for pid in processes_naming("75.3"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
