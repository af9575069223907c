"""Findings, source locations and the one exception type the core raises.

The core never prints or exits: it raises ``RenderError`` carrying every finding it collected, and
the CLI turns that into ``file:line:col: error[CODE]: message`` lines and an exit code.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

from typing import Any, NamedTuple

# Exit codes, aligned with `kubectl diff`: 0 clean, 1 findings/differences, >1 errors.
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2  # Click's own code for bad flags; never reused for anything else.
EXIT_INPUT = 3  # bad overlay, hostile input, or a render refused by an error-severity rule
EXIT_INTERNAL = 4  # a bug in cozy-render; --debug shows the traceback
EXIT_INTERRUPTED = 130

ERROR = "error"
WARNING = "warning"


# Plain NamedTuples and classes here and in the other modules a render loads: dataclasses pulls in
# `inspect` and builds each class with exec, ~15 ms of start-up that Argo CD pays on every refresh.


class Location(NamedTuple):
    """A position in a source file; line and column are 1-based."""

    path: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.col}"
        return self.path


class Finding(NamedTuple):
    code: str
    message: str
    location: Location | None = None
    severity: str = ERROR

    def format(self) -> str:
        """One line whatever the message and path hold: control characters escaped, long text cut
        (``renderer.escape``: a folder name must not forge a second finding or drive the terminal)."""
        from renderer.escape import location_path, printable

        loc = self.location
        where = f"{Location(location_path(loc.path), loc.line, loc.col)}: " if loc else ""
        return f"{where}{self.severity}[{self.code}]: {printable(self.message)}"

    def as_dict(self) -> dict[str, object]:
        """For JSON reports: message and path cut with a count (JSON escapes the rest, ``escape.json_text``)."""
        from renderer.escape import cut

        loc = self.location
        return {
            "code": self.code,
            "severity": self.severity,
            "message": cut(self.message),
            "file": cut(loc.path, 1000) if loc else None,
            "line": loc.line if loc else None,
            "column": loc.col if loc else None,
        }


class RenderError(Exception):
    """Raised by the core when input is unusable or a render is refused."""

    def __init__(self, findings: list[Finding] | None = None, exit_code: int = EXIT_INPUT) -> None:
        super().__init__(findings, exit_code)
        self.findings = list(findings or [])
        self.exit_code = exit_code

    def __str__(self) -> str:
        return "\n".join(f.format() for f in self.findings)


def fail(code: str, message: str, location: Location | None = None) -> RenderError:
    return RenderError([Finding(code, message, location)])


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Stable order by location; one report per problem.

    A rule and the output schema can both catch one mistake (``spec.values`` is PKG-05 and an
    additional property of the CRD): the rule's message says what to do, so a SCHEMA finding on a
    line a rule already reported is dropped.
    """
    def key(f: Finding) -> tuple[Any, ...]:
        loc = f.location or Location("")
        return (loc.path, loc.line, loc.col, f.code, f.message)

    unique = {(f.code, f.message, f.location, f.severity): f for f in findings}
    ruled = {(f.location.path, f.location.line) for f in unique.values()
             if f.location and f.code != SCHEMA_CODE and f.severity == ERROR}
    kept = [f for f in unique.values()
            if not (f.code == SCHEMA_CODE and f.location and (f.location.path, f.location.line) in ruled)]
    return sorted(kept, key=key)


SCHEMA_CODE = "SCHEMA"


def strict_labelled(findings: list[Finding], strict: bool, setting: str = "--strict") -> list[Finding]:
    """The findings of a run as its refusal reports them: under strict every warning fails the run
    (``pipeline.failing``), and its line says so, naming the setting as the user spelled it:
    ``warning[CODE]: message (fails: --strict)``. The severity stays the rule's. Without strict a
    warning never fails a run, so it is never labelled."""
    if not strict:
        return list(findings)
    return [f._replace(message=f"{f.message} (fails: {setting})") if f.severity == WARNING else f for f in findings]
