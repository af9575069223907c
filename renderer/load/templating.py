"""Jinja2 for overlay strings, sandboxed and bounded: no attribute tricks, no files, no environment.

Only ``vars`` and ``cluster`` are visible. Undefined names are errors. Compiled templates are cached
for the life of the process.

Most overlay templates are plain lookups (``https://api.{{ vars.domain }}:{{ vars.port }}``).
Those are substituted directly, with the exact result Jinja2 would give, so a render whose
templates are all lookups never imports jinja2 (about 60 ms of start-up here, more than the rest of
a render). Anything else, and every error case, goes through Jinja2 itself, so messages and
semantics stay Jinja2's.

What a template may do is bounded by the render's budget (``renderer.load.limits``, SECURITY.md), each
bound checked before the work is done:

- output: every template's result, fast path or Jinja2, is charged to one per-render character
  budget while it is produced;
- time: interpreter steps inside Jinja2 are counted (``sys.settrace``), deterministic unlike a clock;
- integers: ``**`` and ``*`` are refused when the result would exceed a bit limit;
- allocation: ``*`` on strings and lists, ``%``/``format`` widths, ``center``/``ljust``/``zfill``
  widths, ``replace`` expansion, ``batch``/``slice`` counts are checked against the output budget
  first, and on Linux the address space is capped around each Jinja2 render (RLIMIT_AS);
- values: only strings, numbers, booleans and lists or maps of those may be printed; anything else
  (a method, ``None``, a dict view) is refused instead of printing a heap address;
- filters: Jinja2's built-ins less ``random``, the one that is not deterministic (README lists them).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from renderer.lazyre import lazy
from renderer.load import limits

_LOOKUP = lazy(r"\{\{ *([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*) *\}\}")
_DICT_ATTRIBUTES = frozenset(dir(dict))  # Jinja2 tries getattr first: vars.items is the method

# Filters that are not deterministic, removed from the environment.
REMOVED_FILTERS = frozenset(["random"])
MAX_RESULT_CHARS = limits.MAX_TEMPLATE_OUTPUT


class TemplateProblem(Exception):
    pass


class _Exhausted(BaseException):
    """Raised from the step counter; a BaseException so no ``except Exception`` in a filter hides it."""


def _lookup_only(source: str, context: dict[str, Any]) -> str | None:
    """The rendered string when ``source`` holds nothing but resolvable lookups, else None."""
    pieces = _lookup_pieces(source, context)
    return None if pieces is None else "".join(pieces)


def _lookup_pieces(source: str, context: dict[str, Any]) -> list[str] | None:
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
            return None  # Jinja2 prints these its own way (True, dict reprs) or refuses them; let it
        pieces += [source[end:match.start()], str(node)]
        end = match.end()
    pieces.append(source[end:])
    return pieces


def _too_large(what: str = "result") -> TemplateProblem:
    return TemplateProblem(f"template refused: {what} too large (the render's template budget is "
                           f"{limits.MAX_TEMPLATE_OUTPUT} characters)")


def _check_size(n: int, what: str = "result") -> None:
    if n > limits.MAX_TEMPLATE_OUTPUT:
        raise _too_large(what)


_PERCENT_SPEC = lazy(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")


def _check_percent_format(fmt: str) -> None:
    """``'%0900000000d' % 1`` allocates before any size check: refuse widths over the budget first."""
    for match in _PERCENT_SPEC.finditer(fmt):
        for width in match.groups():
            if width == "*":
                raise TemplateProblem("template refused: `*` widths in % formatting")
            if width is not None:
                _check_size(int(width), "format width")


def _check_brace_format(fmt: str) -> None:
    import string

    try:
        fields = list(string.Formatter().parse(fmt))
    except ValueError as exc:
        raise TemplateProblem(f"template failed: ValueError: {exc}") from None
    for _literal, _name, spec, _conversion in fields:
        if not spec:
            continue
        if "{" in spec:
            raise TemplateProblem("template refused: nested fields in a format spec")
        for digits in re.findall(r"\d+", spec):
            _check_size(int(digits), "format width")


def _check_int_result(bits: int) -> None:
    if bits > limits.MAX_TEMPLATE_INT_BITS:
        raise TemplateProblem(f"template refused: integer result larger than {limits.MAX_TEMPLATE_INT_BITS} bits")


def _check_replace(s: Any, old: Any, new: Any, count: Any = -1) -> None:
    if isinstance(s, str) and isinstance(old, str) and isinstance(new, str):
        hits = s.count(old) if old else len(s) + 1
        if isinstance(count, int) and count >= 0:
            hits = min(hits, count)
        _check_size(len(s) + hits * max(0, len(new) - len(old)))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_plain(value: Any, depth: int = 0) -> Any:
    """What may leave a template: strings, numbers, booleans, and lists or maps of those."""
    if isinstance(value, (str, int, float)):
        return value
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        return value  # printing it raises Jinja2's own UndefinedError
    if depth < limits.MAX_DEPTH:
        if isinstance(value, (list, tuple)):
            for item in value:
                _check_plain(item, depth + 1)
            return value
        if isinstance(value, dict):
            for key, item in value.items():
                _check_plain(key, depth + 1)
                _check_plain(item, depth + 1)
            return value
    what = "null" if value is None else type(value).__name__
    raise TemplateProblem(f"template prints a {what}; only strings, numbers, booleans, and lists or maps of "
                          "those may leave a template")


# Filter arguments (after the value) that size what the filter allocates.
_SIZED_FILTER_ARGS = {"center": 0, "indent": 0, "batch": 0, "slice": 0}


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    import functools

    from jinja2.utils import _PassArg

    skip = 1 if _PassArg.from_obj(func) is not None else 0  # environment/context comes first

    @functools.wraps(func)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        value, rest = (args[skip], args[skip + 1:]) if len(args) > skip else (None, ())
        if name in _SIZED_FILTER_ARGS:
            sized = list(rest[_SIZED_FILTER_ARGS[name]:][:1]) + [v for k, v in kwargs.items()
                                                                   if k in ("width", "linecount", "slices")]
            for arg in sized:
                if _is_int(arg):
                    _check_size(abs(arg), f"{name} width")
        elif name == "format" and isinstance(value, str):
            _check_percent_format(value)
        elif name == "replace":
            _check_replace(value, *rest[:3])
        result = func(*args, **kwargs)
        if isinstance(result, (str, list)):
            _check_size(len(result))
        return result

    return bounded


@lru_cache(maxsize=1)
def environment():
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _Bounded(ImmutableSandboxedEnvironment):
        """Refuses operations whose result would exhaust memory before they are done."""

        intercepted_binops = frozenset(["*", "**", "%", "+"])

        def call_binop(self, context, operator, left, right):
            if operator == "**" and _is_int(left) and _is_int(right) and right > 0:
                _check_int_result(max(left.bit_length(), 1) * right)
            elif operator == "**" and isinstance(right, (int, float)) and abs(right) > 10_000:
                raise TemplateProblem("template refused: exponent too large")
            elif operator == "*":
                if _is_int(left) and _is_int(right):
                    _check_int_result(left.bit_length() + right.bit_length())
                for seq, count in ((left, right), (right, left)):
                    if isinstance(seq, (str, list, tuple)) and _is_int(count):
                        _check_size(len(seq) * count)
            elif operator == "%" and isinstance(left, str):
                _check_percent_format(left)
            elif operator == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                _check_size(len(left) + len(right))
            return super().call_binop(context, operator, left, right)

        def getattr(self, obj, attribute):
            if isinstance(obj, str) and attribute in ("format", "format_map"):
                _check_brace_format(obj)  # Jinja2 hands out its own wrapper for these
            return super().getattr(obj, attribute)

        def getitem(self, obj, argument):
            if isinstance(obj, str) and argument in ("format", "format_map"):
                _check_brace_format(obj)
            return super().getitem(obj, argument)

        def call(__self, __context, __obj, *args, **kwargs):  # Jinja2's own signature
            owner = getattr(__obj, "__self__", None)
            method = getattr(__obj, "__name__", "")
            if isinstance(owner, str):
                if method in ("center", "ljust", "rjust", "zfill") and args and _is_int(args[0]):
                    _check_size(args[0], f"{method} width")
                elif method == "expandtabs":
                    tab = args[0] if args else kwargs.get("tabsize", 8)
                    if _is_int(tab):
                        _check_size(len(owner) * max(tab, 1), "expandtabs")
                elif method == "replace":
                    _check_replace(owner, *args[:3])
            return super().call(__context, __obj, *args, **kwargs)

    env = _Bounded(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True, finalize=_check_plain)
    env.globals.clear()  # no range/lipsum/dict/cycler/joiner/namespace: nothing the overlay needs
    env.filters = {name: _bounded_filter(name, f) for name, f in env.filters.items() if name not in REMOVED_FILTERS}
    return env


def allowed_filters() -> list[str]:
    return sorted(environment().filters)


def allowed_tests() -> list[str]:
    return sorted(environment().tests)


@lru_cache(maxsize=4096)
def _compile(source: str):
    return environment().from_string(source)


def _charge_output(budget: limits.Budget, n: int) -> None:
    budget.template_output -= n
    if budget.template_output < 0:
        raise _too_large("template output")


@contextmanager
def _steps_counted(budget: limits.Budget) -> Iterator[None]:
    """Counts every line Jinja2 (and the filters it calls) executes against the render's step budget."""
    def local(_frame: Any, event: str, _arg: Any) -> Any:
        if event == "line":
            budget.template_steps -= 1
            if budget.template_steps < 0:
                raise _Exhausted
        return local

    def start(_frame: Any, _event: str, _arg: Any) -> Any:
        budget.template_steps -= 1
        if budget.template_steps < 0:
            raise _Exhausted
        return local

    previous = sys.gettrace()
    sys.settrace(start)
    try:
        yield
    finally:
        sys.settrace(previous)


@contextmanager
def _memory_capped() -> Iterator[None]:
    """Lowers the address-space limit to what the process holds plus TEMPLATE_MEMORY_BYTES, where the
    OS allows it (Linux). Elsewhere the static checks above are the bound (SECURITY.md)."""
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as handle:
            held = int(handle.read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        yield
        return
    cap = held + limits.TEMPLATE_MEMORY_BYTES
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def render_string(source: str, context: dict[str, Any]) -> str:
    budget = limits.current()
    fast = _lookup_pieces(source, context)
    if fast is not None:
        _charge_output(budget, sum(len(piece) for piece in fast))
        return "".join(fast)
    from jinja2 import TemplateError, TemplateSyntaxError
    from jinja2.exceptions import SecurityError, UndefinedError

    try:
        template = _compile(source)
        pieces: list[str] = []
        with _memory_capped(), _steps_counted(budget):
            for piece in template.generate(context):
                _charge_output(budget, len(piece))
                pieces.append(piece)
        return "".join(pieces)
    except _Exhausted:
        raise TemplateProblem(f"template refused: it runs longer than the render's budget of "
                              f"{limits.MAX_TEMPLATE_STEPS} steps") from None
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
    except (MemoryError, SystemError):
        # Under the address-space cap an allocation can also fail inside C code that then reports no
        # exception of its own (CPython's compiler, compiling a module first imported during the render,
        # raises "SystemError: ... returned NULL without setting an exception"): the same exhaustion.
        raise TemplateProblem(f"template refused: it needs more than {limits.TEMPLATE_MEMORY_BYTES // 2**20} MiB "
                              "of memory") from None
    except (ArithmeticError, TypeError, ValueError, OverflowError, RecursionError, LookupError) as exc:
        raise TemplateProblem(f"template failed: {type(exc).__name__}: {exc}") from None
