"""``cozy-render daemon serve``: the resident renderer for the Argo CD sidecar (``renderer.daemon``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from renderer.daemon.server import Server, SetupError, become_subreaper, warm_up
from renderer.errors import Finding, Location, RenderError


def serve(socket_path: Path, deadline: float, verbose: bool = False,
          run_cli: Callable[[], None] | None = None) -> int:
    """Warm up, bind ``socket_path`` and serve until SIGTERM/SIGINT (exit 0). ``run_cli``: the console
    entry each worker runs (``renderer.entry.main``, which started this command and hands itself down)."""
    path = Path(os.path.abspath(socket_path))
    if run_cli is None:
        raise RenderError([Finding("CMP-DAEMON", "daemon serve runs from cozy-render's console entry (the "
                                   "cozy-render command or python -m renderer), whose workers run it again",
                                   Location(str(path)))])
    server = Server(path, deadline, verbose, run_cli)  # the package's files as they are before the warm-up imports them
    try:
        server.claim()  # refuse at once: a folder open to others, another daemon on the path
        warm_up()
        server.listen()  # clients connect only to a warm server; before, they render in-process
    except SetupError as exc:
        raise RenderError([Finding("CMP-DAEMON", exc.message, Location(str(path)))]) from None
    become_subreaper()
    sys.stderr.write(f"cozy-render daemon: serving {path} (pid {os.getpid()}, deadline {deadline:g} s)\n")
    sys.stderr.flush()
    return server.serve()
