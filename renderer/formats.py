"""The one room for an output format: every reporter, keyed by what is reported and the format.

A reporter is a function ``(payload, streams)`` registered with ``@reporter(subject, fmt)``; command
bodies call ``show(subject, fmt, payload)`` and never choose a format themselves, so a new format is
one entry in ``FORMATS`` and one reporter (as check-jsonschema's reporter registry does it). A reporter
returns None, or what its caller needs back from printing (the live diff's external tool's verdict).

``FORMATS`` declares each subject's formats (in ``-o`` order, the default first) without importing the
modules that hold the reporters, so the command line offers ``formats(subject)`` as its ``-o`` choices
at start-up for the price of this module (no project import, so not the output package's YAML
loader either); ``reporter`` refuses an undeclared pair, and tests/test_formats.py proves every
declared pair has its reporter. It sits with the output stage, below the drivers (``renderer.diff``,
``renderer.preview``), which register reporters of their own.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import io
import sys
from collections.abc import Callable
from typing import Any, NamedTuple, TextIO

# subject -> formats; the module that registers each subject's reporters in the comment.
FORMATS: dict[str, tuple[str, ...]] = {
    "findings": ("text", "json", "github"),  # check; refusals and warnings (renderer.report)
    "objects": ("yaml", "json"),  # render: one cluster's stream (renderer.report)
    "fleet": ("yaml", "json"),  # render --all to stdout (renderer.commands.render)
    "annotated": ("yaml", "json"),  # render --annotate (renderer.commands.render)
    # render --out --check takes render's -o: yaml (the default) is the text report on stderr
    "stale": ("yaml", "json"),  # (renderer.output.check)
    "explain": ("text", "json"),  # explain PATH [KEY] (renderer.commands.explain)
    "explain-rendered": ("text", "json"),  # explain --rendered (renderer.commands.explain)
    "rules": ("text", "json"),  # rules [CODE] (renderer.commands.rules)
    "inputs": ("text", "json"),  # (renderer.commands.inputs)
    "clusters": ("table", "json"),  # ls (renderer.commands.ls)
    "effective": ("yaml", "json", "table"),  # one cluster's set (renderer.commands.effective)
    "effective-run": ("yaml", "json", "table"),  # every cluster's, in order; --all -o json one list (same)
    "doctor": ("text", "json"),  # (renderer.commands.doctor)
    "diff": ("text", "json"),  # the live diff (renderer.diff.report)
    "review": ("text", "json", "markdown"),  # diff --base (renderer.preview.report)
}


class Streams(NamedTuple):
    stdout: TextIO
    stderr: TextIO


Reporter = Callable[[Any, Streams], Any]
_REPORTERS: dict[tuple[str, str], Reporter] = {}


def reporter(subject: str, fmt: str) -> Callable[[Reporter], Reporter]:
    if fmt not in FORMATS.get(subject, ()):
        raise AssertionError(f"reporter({subject!r}, {fmt!r}): declare the format in FORMATS first")

    def register(fn: Reporter) -> Reporter:
        _REPORTERS[subject, fmt] = fn
        return fn

    return register


def formats(subject: str) -> list[str]:
    """The formats of ``subject``, in ``-o`` order (the default first)."""
    return list(FORMATS[subject])


def show(subject: str, fmt: str, payload: Any, streams: Streams | None = None) -> Any:
    """Print ``payload`` with the reporter registered for (``subject``, ``fmt``); returns what it returns."""
    return _REPORTERS[subject, fmt](payload, streams or Streams(sys.stdout, sys.stderr))


def shown(subject: str, fmt: str, payload: Any) -> str:
    """What ``show`` would print on stdout, as a string (the render cache stores the bytes)."""
    buffer = io.StringIO()
    show(subject, fmt, payload, Streams(buffer, sys.stderr))
    return buffer.getvalue()
