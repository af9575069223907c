"""The codes of the resident renderer (``renderer.daemon``), kept apart so the client imports no registry."""

from __future__ import annotations

from renderer.codes import Code
from renderer.errors import ERROR

CODES: list[Code] = [
    Code("CMP-DAEMON", ERROR, "daemon serve cannot serve its socket path",
         "The socket's folder must be this user's and closed to others (0700; it is created so when missing), "
         "the path must be free or hold a stale socket (one no running daemon holds the lock PATH.lock of), and "
         "no other daemon may serve it. Fix the folder's owner or mode, remove what is in the way, or stop the "
         "other daemon. `cmp generate` keeps rendering in-process meanwhile.",
         "README, Argo CD (the resident renderer)"),
    Code("CMP-WORKER", ERROR, "the resident renderer's worker ended without an exit code",
         "The process rendering this request was killed (out of memory, a signal), the daemon stopped while it "
         "ran, or the connection to the daemon broke. Nothing else was affected: every request has a worker of "
         "its own. Argo CD retries the generate; unset COZY_RENDER_DAEMON_SOCKET to render in-process.",
         "README, Argo CD (the resident renderer)"),
    Code("CMP-DEADLINE", ERROR, "the render ran past the resident renderer's deadline",
         "`daemon serve --deadline` (default 300 s) bounds one request; the worker and everything it started "
         "in its process group were killed. A helm that hangs (chart: helm) is the usual cause; raise the "
         "deadline or look at the chart.",
         "README, Argo CD (the resident renderer)"),
]
