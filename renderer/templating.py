"""Jinja2 for overlay strings, sandboxed: no attribute tricks, no files, no environment.

Only ``vars`` and ``cluster`` are visible. Undefined names are errors. Compiled templates are cached
for the life of the process.

Most overlay templates are plain lookups (``https://api.{{ vars.domain }}:{{ vars.port }}``).
Those are substituted directly, with the exact result Jinja2 would give, so a render whose
templates are all lookups never imports jinja2 (about 60 ms of start-up here, more than the rest of
a render). Anything else, and every error case, goes through Jinja2 itself, so messages and
semantics stay Jinja2's.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_LOOKUP = re.compile(r"\{\{ *([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*) *\}\}")
_DICT_ATTRIBUTES = frozenset(dir(dict))  # Jinja2 tries getattr first: vars.items is the method


def _lookup_only(source: str, context: dict[str, Any]) -> str | None:
    """The rendered string when ``source`` holds nothing but resolvable lookups, else None."""
    if any(marker in _LOOKUP.sub("", source) for marker in ("{{", "{%", "{#")):
        return None
    pieces: list[str] = []
    end = 0
    for match in _LOOKUP.finditer(source):
        node: Any = context
        for name in match.group(1).split("."):
            if not isinstance(node, dict) or name not in node or name in _DICT_ATTRIBUTES:
                return None
            node = node[name]
        if isinstance(node, bool) or not isinstance(node, (str, int, float)):
            return None  # Jinja2 prints these its own way (True, dict reprs); let it
        pieces += [source[end:match.start()], str(node)]
        end = match.end()
    pieces.append(source[end:])
    return "".join(pieces)


class TemplateProblem(Exception):
    pass


MAX_RESULT_CHARS = 1_000_000


@lru_cache(maxsize=1)
def _environment():
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _Bounded(ImmutableSandboxedEnvironment):
        """Refuses `*` and `**` results that would exhaust memory ("a" * 10**10, 9**9**9)."""

        intercepted_binops = frozenset(["*", "**"])

        def call_binop(self, context, operator, left, right):
            if operator == "**" and isinstance(right, (int, float)) and abs(right) > 1000:
                raise TemplateProblem("template refused: exponent too large")
            if operator == "*":
                for seq, count in ((left, right), (right, left)):
                    sized = isinstance(seq, (str, list, tuple)) and isinstance(count, int)
                    if sized and len(seq) * count > MAX_RESULT_CHARS:
                        raise TemplateProblem("template refused: result too large")
            return super().call_binop(context, operator, left, right)

    env = _Bounded(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.globals.clear()  # no range/lipsum/dict/cycler/joiner/namespace: nothing the overlay needs
    return env


@lru_cache(maxsize=4096)
def _compile(source: str):
    return _environment().from_string(source)


def render_string(source: str, context: dict[str, Any]) -> str:
    fast = _lookup_only(source, context)
    if fast is not None:
        return fast
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
