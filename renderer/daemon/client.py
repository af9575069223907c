"""``cmp generate`` as a thin client of the resident renderer (``renderer.daemon``).

Runs on every Argo CD refresh before anything heavy is imported: ``os``, ``sys`` and the C socket module
``_socket`` (``socket`` would import ``enum`` and ``selectors``), nothing else. Every failure before the
server has accepted the request returns None, and the caller renders in-process exactly as without a
daemon: no socket file, a stale one (nobody listening), a server of another version, package or
interpreter, a closed standard stream the request cannot carry. Once accepted, the render is the
server's: the outcome is its exit code, or a coded line (CMP-WORKER) when the connection ends
without one.
"""

from __future__ import annotations

import os
import sys

import renderer
import renderer.daemon
from renderer.daemon import protocol

HANDSHAKE_SECONDS = 10.0  # connect, send, accepted-or-refused: a server this slow is treated as absent
GRACE_SECONDS = 30.0  # past the server's own deadline (it kills the worker and reports); then give up
EXIT_INTERNAL = 4  # renderer.errors.EXIT_INTERNAL, not imported (renderer.errors imports typing)
EXIT_INTERRUPTED = 130  # renderer.errors.EXIT_INTERRUPTED


def interpreter_key() -> bytes:
    """What the server's interpreter must share with the client's for a worker to behave the same:
    the executable, its flags (-X dev, -I, UTF-8 mode...), -W options, the character-type locale it set
    up from LC_ALL/LC_CTYPE/LANG, and the import path (``import_path``). ``safe_path`` (-P,
    PYTHONSAFEPATH) is left out of the flags: all it changes is whether the script's folder leads the
    import path, and ``import_path`` leaves that entry out either way."""
    import _locale

    flags = [f"{name}={getattr(sys.flags, name)}" for name in type(sys.flags).__match_args__ if name != "safe_path"]
    parts = [os.path.realpath(sys.executable), *flags, repr(sys.warnoptions), repr(sys._xoptions),
             _locale.setlocale(_locale.LC_CTYPE), *import_path()]  # setlocale(category): a query, no change
    return os.fsencode("\0".join(parts))


def import_path() -> list[str]:
    """``sys.path`` without the entry the interpreter put first for this process alone (the script's
    folder, ``-m``'s or ``-c``'s working folder): none under ``-P``/PYTHONSAFEPATH, where every entry
    is the environment's (PYTHONPATH, the standard library, site-packages)."""
    return list(sys.path) if getattr(sys.flags, "safe_path", 0) else sys.path[1:]  # -P: Python 3.11+


def package_identity() -> tuple[bytes, bytes]:
    return renderer.__version__.encode(), os.fsencode(os.path.dirname(os.path.abspath(renderer.__file__)))


def stream_settings() -> bytes | None:
    """Encoding, errors, line buffering and write-through of stdin, stdout, stderr as Python set them up
    for this process (from its locale and PYTHONIOENCODING): the worker builds the same streams."""
    parts = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if stream is None or not hasattr(stream, "encoding"):
            return None  # a closed standard descriptor: in-process knows how to report that
        parts += [stream.encoding, stream.errors or "strict", "1" if getattr(stream, "line_buffering", False) else "",
                  "1" if getattr(stream, "write_through", False) else ""]
    return "\0".join(parts).encode()


def request_fields() -> list[bytes] | None:
    streams = stream_settings()
    if streams is None:
        return None
    version, package = package_identity()
    mask = os.umask(0o077)
    os.umask(mask)
    environ = b"\0".join(key + b"=" + value for key, value in os.environb.items())
    return [protocol.MAGIC, version, package, interpreter_key(), streams, b"%o" % mask,
            b"\0".join(os.fsencode(arg) for arg in sys.argv), environ]


def delegate(socket_path: str) -> int | None:
    """The exit code of the render the daemon at ``socket_path`` ran for this process, or None when
    there is no daemon to run it (the caller renders in-process)."""
    import _socket

    if renderer.daemon.IN_WORKER:
        return None
    fields = request_fields()
    if fields is None:
        return None
    try:
        cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(HANDSHAKE_SECONDS)
        try:
            sock.connect(socket_path)
            descriptors = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (cwd, 0, 1, 2))
            message = protocol.pack(fields)
            sent = sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, descriptors)])
            if sent < len(message):
                sock.sendall(message[sent:])
            tag, payload = protocol.read_frame(sock)
            if tag != protocol.ACCEPTED:
                return None  # REFUSED: another version, package, interpreter or uid
            deadline = float(payload)
            sock.sendall(protocol.GO)
        except (OSError, ValueError, protocol.ProtocolError):
            return None  # no daemon, a stale socket, a server gone mid-handshake: in-process
        finally:
            os.close(cwd)
        return _outcome(sock, deadline)
    finally:
        sock.close()


def _outcome(sock: object, deadline: float) -> int:
    """Wait for the exit frame; the worker writes stdout and stderr itself, through the passed descriptors."""
    try:
        sock.settimeout(deadline + GRACE_SECONDS)  # type: ignore[attr-defined]
        tag, payload = protocol.read_frame(sock)
        if tag != protocol.EXITED:
            raise protocol.ProtocolError(f"unexpected frame {tag!r}")
        code, _, line = payload.partition(b"\n")
        if line:
            _say(line)
        return int(code)
    except KeyboardInterrupt:
        _say(b"interrupted\n")  # renderer.runner's words; the server kills the worker when we hang up
        return EXIT_INTERRUPTED
    except (OSError, ValueError, protocol.ProtocolError) as exc:
        _say(b"error[CMP-WORKER]: the resident renderer ended the request without an exit code (%s); "
             b"rerun, or unset COZY_RENDER_DAEMON_SOCKET to render in-process\n" % _reason(exc).encode())
        return EXIT_INTERNAL


def _reason(exc: BaseException) -> str:
    return "no answer in time" if type(exc).__name__ in ("TimeoutError", "timeout") else str(exc) or type(exc).__name__


def _say(line: bytes) -> None:
    try:
        sys.stderr.flush()
        os.write(2, line)
    except (OSError, ValueError, AttributeError):
        pass
