"""The resident renderer for the Argo CD sidecar (issue 37 item 1).

``cozy-render daemon serve --socket PATH`` imports what ``cmp generate`` needs once and stays warm;
``cmp generate`` with ``COZY_RENDER_DAEMON_SOCKET=PATH`` set is then a thin client
(``renderer.daemon.client``): it passes its argv, its environment (bytes), its umask, the encodings of its
streams and four open file descriptors (its working folder, stdin, stdout, stderr, over SCM_RIGHTS) to
the server (``renderer.daemon.server``), which forks a fresh worker per request
(``renderer.daemon.worker``). The worker takes the client's descriptors as its own 0, 1, 2 and
working folder and runs the same ``renderer.entry`` body an in-process run runs, so it writes the
client's stdout and stderr itself: the same bytes, the same ``isatty``, the same EPIPE and ENOSPC
answers. The server sends the worker's exit code back when it reaps it (or a coded line when it was
killed or ran past the deadline).

Without a server (variable unset, no socket, a stale socket, a refusal: another uid, another version,
another installed package, other interpreter options), the client renders in-process, silently.

The wire format (``renderer.daemon.protocol``) and the client import only ``os``, ``sys`` and
``_socket``: the client runs on every refresh.
"""

from __future__ import annotations

SOCKET_ENV = "COZY_RENDER_DAEMON_SOCKET"
# True in a worker (renderer.daemon.worker): it is the in-process path, so ``cmp generate`` there never
# hands the request on again, whatever its environment says.
IN_WORKER = False
