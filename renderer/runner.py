"""The one place that turns a command body's result or exception into output and an exit code
(the table is in ``renderer.errors``). Command bodies return an exit code or raise ``RenderError``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn

from renderer import report
from renderer.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, RenderError


def execute(body: Callable[[], int | None], debug: bool = False,
            passthrough: tuple[type[BaseException], ...] = ()) -> NoReturn:
    """Run ``body`` and exit. ``passthrough`` exceptions (Click's usage errors) are re-raised for
    their owner to report."""
    __import__("renderer.output").output.configure_streams()  # UTF-8 stdout in any locale (issue 12)
    try:
        code = body()
        sys.stdout.flush()
    except RenderError as exc:
        report.write(exc.findings)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # The reader went away (`| head`); nothing useful can be said on a closed stdout.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except passthrough:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into an exit code
        if debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)\n")
        sys.exit(EXIT_INTERNAL)
    sys.exit(code or EXIT_OK)
