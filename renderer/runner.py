"""The one place that turns a command body's result or exception into output and an exit code
(the table is in ``renderer.errors``). Command bodies return an exit code or raise ``RenderError``.

A render-cache hit runs through here too (``renderer.entry``), so this module imports only ``os`` and
``sys`` up front; what reports a failure is imported when there is one.
"""

from __future__ import annotations

import errno
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn


def execute(body: Callable[[], int | None], debug: bool = False,
            passthrough: tuple[type[BaseException], ...] = ()) -> NoReturn:
    """Run ``body`` and exit. ``passthrough`` exceptions (Click's usage errors) are re-raised for
    their owner to report."""
    quiet_dependency_warnings()
    configure_streams()  # UTF-8 stdout in any locale (issue 12)
    try:
        from renderer.streams import require_working_directory

        require_working_directory()
        code = body()
        sys.stdout.flush()
    except BrokenPipeError:
        # A write that bypassed the guard (renderer.streams.ReaderGuard): the code it would have had is
        # unknown, so it is not claimed to be clean either.
        from renderer import report
        from renderer.streams import stream_failure

        failure = stream_failure(OSError(errno.EPIPE, "the reader closed stdout"))
        assert failure is not None
        report.write(failure.findings)
        sys.exit(failure.exit_code)
    except OSError as exc:
        from renderer import report
        from renderer.streams import stream_failure

        failure = stream_failure(exc)  # a full disk or closed stdout: input's fault, not a bug (issue 25 item 8)
        if failure is None:
            raise
        report.write(failure.findings)
        sys.exit(failure.exit_code)
    except KeyboardInterrupt:
        from renderer.errors import EXIT_INTERRUPTED

        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except passthrough:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into an exit code
        from renderer import report
        from renderer.errors import EXIT_INTERNAL, RenderError

        if isinstance(exc, RenderError):  # no RenderError is an OSError or one of `passthrough`
            report.write(exc.findings)
            sys.exit(exc.exit_code)
        if debug:
            import traceback

            traceback.print_exc()
        from renderer.escape import printable

        sys.stderr.write(f"internal error: {type(exc).__name__}: {printable(exc)} "
                         "(rerun with --debug for a traceback)\n")
        sys.exit(EXIT_INTERNAL)
    sys.exit(code or 0)  # renderer.errors.EXIT_OK


class _NotOurs:
    """A warnings filter's module test (it calls ``match(module)``, as on a compiled pattern): true for
    every module but cozy-render's own. Not a regular expression: ``re`` is not imported on a cache hit."""

    @staticmethod
    def match(module: str) -> bool:
        return module != "renderer" and not module.startswith("renderer.")


class _FiltersChanged(Warning):
    """Never raised: adding a filter for it is the public way to tell ``warnings`` its filters changed."""


def quiet_dependency_warnings() -> None:
    """A library's warnings (urllib3's FutureWarning about its next major version, InsecureRequestWarning
    on every request to a server with insecure-skip-tls-verify, ruamel.yaml's, the Kubernetes client's
    DeprecationWarning) are its maintainers' business, not the user's: on stderr they break the one-line
    ``file:line:col: error[CODE]`` contract, and under ``PYTHONWARNINGS=error`` they would end the run
    as an internal error (issue 34 item 4). They are ignored whatever ``-W``/``PYTHONWARNINGS`` says;
    a warning raised in cozy-render's own modules is left to those settings."""
    import warnings

    if not any(isinstance(f[3], _NotOurs) for f in warnings.filters):
        warnings.filters.insert(0, ("ignore", None, Warning, _NotOurs(), 0))  # type: ignore[attr-defined]
        warnings.simplefilter("default", _FiltersChanged, append=True)  # bumps the filters' version


def configure_streams() -> None:
    """Make stdout and stderr safe in any locale.

    Manifests are UTF-8 whatever the locale (YAML and kubectl read UTF-8), so stdout always writes
    UTF-8: the same bytes under LC_ALL=tr_TR.ISO-8859-9 as under C.UTF-8. Messages on stderr keep the
    locale's encoding for the terminal, with characters it cannot show escaped instead of crashing.
    """
    from renderer.streams import guard_reader, replace_closed

    replace_closed()  # a closed stdout or stderr (`2>&-`): see renderer.streams
    for stream, options in ((sys.stdout, {"encoding": "utf-8", "errors": "strict"}),
                            (sys.stderr, {"errors": "backslashreplace"})):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:  # noqa: SIM105 - contextlib would cost a render-cache hit its import
            reconfigure(**options)
        except (ValueError, OSError, LookupError):
            pass
    guard_reader()  # `| head`: the command still exits with its own code (renderer.streams)

