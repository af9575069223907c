"""The process's own streams and working directory, which the caller controls (issue 25 items 8, 12).

- A closed stderr (``2>&-``) must not lose the manifests: messages go nowhere, stdout is written.
- A stdout its reader closes early (``| head -1``, EPIPE) does not hide the result: the rest of the
  output is discarded, the command runs to its end and exits with its own code (``diff`` 1 when
  there are differences, ``check`` 1 or 3 on findings, 0 when all is well), as if the reader had read
  it all. Nothing is printed about it: the reader chose to stop reading.
- A stdout closed before the process started (``>&-``), or one that cannot take the bytes
  (``> /dev/full``, a full disk, a read-only file system), is a located refusal (``OUT-STREAM``,
  exit 3), never an internal error: nobody received the output. What was buffered is dropped so the
  interpreter's own flush at exit cannot print a traceback either.
- A working directory deleted under the process is ``CLI-CWD`` (exit 3): messages name paths
  relative to it, and the cache key holds it.
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a render-cache hit runs this module
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from renderer.errors import RenderError

_STREAM_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EBADF, errno.EIO, errno.EROFS, errno.EFBIG, errno.EPIPE}


class _Closed:
    """Stands in for a stream whose file descriptor was closed before the process started."""

    def __init__(self, name: str) -> None:
        self.name = name

    def write(self, _text: str) -> int:
        raise OSError(errno.EBADF, f"{self.name} is closed")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, f"{self.name} is closed")


def replace_closed() -> None:
    """Python sets ``sys.stdout``/``sys.stderr`` to None when fd 1/2 is closed at start-up."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    if sys.stdout is None:
        sys.stdout = _Closed("stdout")


class ReaderGuard:
    """``sys.stdout`` whose reader may go away (``| head``): from the first EPIPE on, output is
    discarded (fd 1 points at /dev/null) and the command carries on to its own exit code."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.reader_left = False

    def write(self, text: str) -> int:
        if not self.reader_left:
            try:
                return int(self._inner.write(text))
            except BrokenPipeError:
                self._left()
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._inner.flush()
        except BrokenPipeError:
            self._left()

    def _left(self) -> None:
        self.reader_left = True
        _drop_stdout()
        try:  # noqa: SIM105 - contextlib would cost a render-cache hit its import
            self._inner.flush()  # what was buffered goes to /dev/null now
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def guard_reader() -> None:
    """Wrap ``sys.stdout`` (once) so that a reader going away cannot change the exit code."""
    if sys.stdout is not None and not isinstance(sys.stdout, (ReaderGuard, _Closed)):
        sys.stdout = ReaderGuard(sys.stdout)


def _drop_stdout() -> None:
    """Point fd 1 at /dev/null so buffered output is discarded at exit instead of failing again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def stream_failure(exc: OSError) -> RenderError | None:
    """The refusal for an OSError that is the output's fault (a full or closed stream), else None."""
    if exc.errno not in _STREAM_ERRORS:
        return None
    from renderer.errors import Finding, Location, RenderError

    _drop_stdout()
    reason = exc.strerror or str(exc)
    return RenderError([Finding("OUT-STREAM", f"cannot write the output: {reason}", Location("<stdout>"))])


def require_working_directory() -> None:
    try:
        os.getcwd()
    except FileNotFoundError:
        from renderer.errors import Finding, Location, RenderError

        raise RenderError([Finding("CLI-CWD", "the working directory no longer exists; change to an existing "
                                              "folder and run again", Location("."))]) from None
