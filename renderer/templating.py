"""Jinja2 for overlay strings, sandboxed: no attribute tricks, no files, no environment.

Only ``vars`` and ``cluster`` are visible. Undefined names are errors. jinja2 is imported on the first
templated string, so overlays without templates never pay for it; compiled templates are cached for
the life of the process.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


class TemplateProblem(Exception):
    pass


MAX_RESULT_CHARS = 1_000_000


@lru_cache(maxsize=1)
def _environment():  # noqa: ANN202
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _Bounded(ImmutableSandboxedEnvironment):
        """Refuses `*` and `**` results that would exhaust memory ("a" * 10**10, 9**9**9)."""

        intercepted_binops = frozenset(["*", "**"])

        def call_binop(self, context, operator, left, right):  # noqa: ANN001, ANN201
            if operator == "**" and isinstance(right, (int, float)) and abs(right) > 1000:
                raise TemplateProblem("template refused: exponent too large")
            if operator == "*":
                for seq, count in ((left, right), (right, left)):
                    if isinstance(seq, (str, list, tuple)) and isinstance(count, int) and len(seq) * count > MAX_RESULT_CHARS:
                        raise TemplateProblem("template refused: result too large")
            return super().call_binop(context, operator, left, right)

    env = _Bounded(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.globals.clear()  # no range/lipsum/dict/cycler/joiner/namespace: nothing the overlay needs
    return env


@lru_cache(maxsize=4096)
def _compile(source: str):  # noqa: ANN202
    return _environment().from_string(source)


def render_string(source: str, context: dict[str, Any]) -> str:
    from jinja2 import TemplateError, TemplateSyntaxError
    from jinja2.exceptions import SecurityError, UndefinedError

    try:
        result = _compile(source).render(context)
    except TemplateProblem:
        raise
    except TemplateSyntaxError as exc:
        raise TemplateProblem(f"template syntax error: {exc.message}") from None
    except UndefinedError as exc:
        raise TemplateProblem(f"undefined in template: {exc.message} (only vars and cluster are visible)") from None
    except SecurityError as exc:
        raise TemplateProblem(f"template refused by the sandbox: {exc}") from None
    except TemplateError as exc:
        raise TemplateProblem(f"template error: {exc.message or exc}") from None
    except (ArithmeticError, TypeError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        raise TemplateProblem(f"template failed: {type(exc).__name__}: {exc}") from None
    if len(result) > MAX_RESULT_CHARS:
        raise TemplateProblem("template refused: result too large")
    return result
