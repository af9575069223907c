"""The daemon's wire format: small enough for the client's start-up (``os``, ``sys``, ``_socket`` only).

A request is one message: a 4-byte big-endian length, then fields, each a 4-byte length and its bytes;
the client's descriptors ride on its first byte (SCM_RIGHTS). Lists inside a field (argv, environment
entries, stream settings) are NUL-separated: none of them can hold a NUL. Replies are frames: one tag
byte, a 4-byte length, the payload.

- ``A`` accepted (payload: the deadline in seconds); the client answers ``G`` (go) and is committed.
  A client that gives up before ``G`` lets the server drop the request unrun, so no render can write
  the output of a client that already fell back to rendering in-process.
- ``R`` refused (payload: why): the client renders in-process.
- ``X`` exit (payload: the exit code in ASCII, a newline, then a line for stderr, usually empty).
"""

from __future__ import annotations

MAGIC = b"cozy-render-daemon/1"
ACCEPTED, REFUSED, EXITED, GO = b"A", b"R", b"X", b"G"
MAX_REQUEST = 8 << 20  # argv plus environment: Linux caps them at ARG_MAX-ish sizes far below this
DESCRIPTORS = 4  # working folder, stdin, stdout, stderr
# Fields of a request, in order.
FIELDS = ("magic", "version", "package", "interpreter", "streams", "umask", "argv", "environ")


class ProtocolError(Exception):
    """The peer sent something that is not this protocol, or went away mid-message."""


def pack(fields: list[bytes]) -> bytes:
    body = b"".join(len(field).to_bytes(4, "big") + field for field in fields)
    return len(body).to_bytes(4, "big") + body


def unpack(body: bytes) -> list[bytes]:
    fields, at = [], 0
    while at < len(body):
        if at + 4 > len(body):
            raise ProtocolError("a field's length is cut short")
        size = int.from_bytes(body[at:at + 4], "big")
        at += 4
        if at + size > len(body):
            raise ProtocolError("a field is cut short")
        fields.append(body[at:at + size])
        at += size
    return fields


def frame(tag: bytes, payload: bytes = b"") -> bytes:
    return tag + len(payload).to_bytes(4, "big") + payload


def read_exactly(sock: object, size: int) -> bytes:
    """``size`` bytes from ``sock`` (anything with ``recv``); ProtocolError at end of stream."""
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 16))  # type: ignore[attr-defined]
        if not chunk:
            raise ProtocolError("the peer closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(sock: object) -> tuple[bytes, bytes]:
    head = read_exactly(sock, 5)
    size = int.from_bytes(head[1:], "big")
    if size > MAX_REQUEST:
        raise ProtocolError("a frame is too large")
    return head[:1], read_exactly(sock, size)
