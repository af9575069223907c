"""Console entry point.

Argo CD runs ``cozy-render cmp generate`` once per Application per refresh, and CI runs
``cozy-render render PATH`` per cluster, so their start-up is paid thousands of times a day.
Exactly those two argument vectors, with no options, build the same request objects the Click
commands build (``renderer.requests``, where the defaults live) and run the same command bodies,
without importing Click (~30 ms here). Anything else, including ``--help``, options, or a PATH that
does not exist (Click reports that as a usage error), goes through Click.

With ``COZY_RENDER_CACHE_DIR`` set, the two fast paths first look the render up in the cache
(``renderer.cache.replay``) before any request object exists: a hit imports nothing but ``os``,
``sys`` and the cache's own few lines, and writes the stored bytes through ``renderer.runner``.

With ``COZY_RENDER_DAEMON_SOCKET`` set, a ``cmp generate`` the cache did not answer is handed to the
resident renderer (``renderer.daemon``), whose forked worker runs this same module's in-process path
with delegation off (``renderer.daemon.IN_WORKER``); when there is no daemon to hand it to, it runs
here as above.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a cache hit never does)
if TYPE_CHECKING:
    from collections.abc import Callable


def hot(argv: list[str]) -> bool:
    """Whether ``argv`` is one of the two hot argument vectors (the fast path and the cache hit take it)."""
    return argv == ["cmp", "generate"] or (len(argv) == 2 and argv[0] == "render" and not argv[1].startswith("-")
                                           and os.path.exists(argv[1]))


def fast_path(argv: list[str]) -> Callable[[], int] | None:
    """The command body for ``argv`` when it is one of the two hot argument vectors, else None."""
    if not hot(argv):
        return None
    from pathlib import Path

    # With the cache on, the entry is keyed on what the request is built from (renderer.cache.argv_fields):
    # the key a hit (``cached``) looks up before any request exists.
    key = None
    if os.environ.get("COZY_RENDER_CACHE_DIR"):
        from renderer.cache import argv_fields

        key = argv_fields(argv, os.environ)
    if argv[0] == "cmp":
        from renderer.commands import cmp
        from renderer.requests import CmpGenerateRequest

        cmp_request = CmpGenerateRequest.from_environment(Path("."))
        return lambda: cmp.generate(cmp_request, key)
    from renderer.commands import render
    from renderer.requests import RenderRequest

    render_request = RenderRequest(Path(argv[1]))
    return lambda: render.run(render_request, key)


def cached(argv: list[str]) -> tuple[str, str] | None:
    """The render cache's (stdout, stderr) for a fast-path ``argv``, else None (``renderer.cache.replay``)."""
    if not os.environ.get("COZY_RENDER_CACHE_DIR") or not hot(argv):  # renderer.cache.ENV; not imported unless set
        return None
    from renderer.cache import replay

    return replay(argv, os.environ)


def delegated(argv: list[str]) -> int | None:
    """With COZY_RENDER_DAEMON_SOCKET set (renderer.daemon.SOCKET_ENV), ``cmp generate``'s exit code from
    the resident renderer, which wrote its output; None when there is none to ask (render in-process)."""
    socket_path = os.environ.get("COZY_RENDER_DAEMON_SOCKET")
    if not socket_path or argv != ["cmp", "generate"]:
        return None
    from renderer.daemon.client import delegate

    return delegate(socket_path)


def _served(code: int) -> None:
    """Leave with the resident renderer's exit code. Its worker wrote the output through this process's
    descriptors, so unless something registered an atexit handler or started a thread (a probe around
    ``main``), nothing is left to run or flush but the standard streams, and the process skips the
    interpreter's teardown (~1.5 ms of a request that costs ~25)."""
    import atexit

    if getattr(atexit, "_ncallbacks", lambda: 1)() or "threading" in sys.modules:
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - what the interpreter's own exit does with a stream that cannot flush
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code & 0xFF)


def _replayed(stdout: str, stderr: str) -> int:
    """What ``renderer.commands.common.write_cached`` writes on a hit, in the same order."""
    sys.stderr.write(stderr)
    sys.stdout.write(stdout)
    return 0  # renderer.errors.EXIT_OK


# Young objects the cyclic collector lets pile up before it runs (CPython's default: 700). Start-up
# allocates tens of thousands of objects that all stay alive (modules, classes, validators), and the
# default made a cold render walk them in ~18 collections, ~2 % of its instructions (valgrind,
# issue 24); cyclic garbage waits a little longer instead (at most this many objects). A fleet
# collects between clusters (renderer.batch); mypy raises the same threshold for the same reason.
GC_YOUNG_THRESHOLD = 50_000


def main() -> None:
    try:
        _main()
    except SystemExit as done:
        _leave(done.code)


def _leave(code: object) -> None:
    """The process ends here, whatever ran: when a thread is still waiting on a server past --timeout (a
    body dripping one byte at a time), the interpreter would join it before exiting, so the exit code
    comes only once that thread gives up. Output is flushed, every process cozy-render started is
    ended (renderer.childproc), and the process leaves at once."""
    threading = sys.modules.get("threading")  # not imported: no other thread can exist (a render's path)
    if threading is None or threading.active_count() == 1:
        raise SystemExit(code)
    import contextlib

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    from renderer.childproc import end_descendants

    end_descendants()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


def _main() -> None:
    import gc

    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    argv = sys.argv[1:]
    hit = cached(argv)
    if hit is not None:
        from renderer.runner import execute

        execute(lambda: _replayed(*hit))
    code = delegated(argv)
    if code is not None:
        _served(code)
    body = fast_path(argv)
    if body is not None:
        from renderer.runner import execute

        execute(body)
    from renderer.cli import main as click_main

    click_main(obj=EntryPoint(main))


class EntryPoint:
    """What the command line hands its commands: this entry, for ``daemon serve``'s workers to run
    again (the daemon module cannot import it back: the CLI imports the daemon)."""

    def __init__(self, run_cli: Callable[[], None]) -> None:
        self.run_cli = run_cli


if __name__ == "__main__":  # pragma: no cover
    main()
