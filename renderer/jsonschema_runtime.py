"""What the generated validator modules import when they run (``renderer/_generated``).

fastjsonschema's generated code starts with ``from decimal import Decimal`` and ``from fastjsonschema
import JsonSchemaValueException, JsonSchemaValuesException``. Both imports cost a cold render more
than the validation itself: ``decimal`` loads the C ``_decimal`` module (~2 ms) and the package
import loads every schema compiler (~4 ms). The generators (``python -m renderer.generate``) rewrite
those lines to import the same names from here (``rewrite``):

- the exception classes are fastjsonschema's own, from ``fastjsonschema.exceptions`` without the
  package's ``__init__`` (``renderer.lightimport``), so ``except`` clauses anywhere still match;
- ``Decimal`` mostly serves ``isinstance(value, (int, float, Decimal))``; a value can only be a
  ``decimal.Decimal`` once ``decimal`` is imported, so the check asks ``decimal`` when it is loaded and
  answers no otherwise: the same answer, without the import. Calling it makes a real one.

The same rewrite makes each pattern of ``REGEX_PATTERNS`` compile on first use (``renderer.lazyre``):
fastjsonschema's module compiles all of them at import, and a render meets few.
"""

from __future__ import annotations

import sys
from typing import Any

from renderer.lightimport import submodule

_exceptions = submodule("fastjsonschema", "exceptions")
JsonSchemaException = _exceptions.JsonSchemaException
JsonSchemaValueException = _exceptions.JsonSchemaValueException
JsonSchemaValuesException = _exceptions.JsonSchemaValuesException


class _DecimalCheck(type):
    def __instancecheck__(cls, value: object) -> bool:
        decimal = sys.modules.get("decimal")
        return decimal is not None and isinstance(value, decimal.Decimal)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:  # `multipleOf` computes with real decimals
        from decimal import Decimal as real

        return real(*args, **kwargs)


class Decimal(metaclass=_DecimalCheck):
    """``decimal.Decimal`` for generated code, importing ``decimal`` only when a value is made."""


_LIBRARY_IMPORTS = (
    "from decimal import Decimal\n",
    "from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException\n",
)
_RUNTIME_IMPORT = (
    "from renderer.jsonschema_runtime import Decimal, JsonSchemaValueException, JsonSchemaValuesException\n"
)


def rewrite(code: str) -> str:
    """One module of fastjsonschema's generated ``code``, importing its run-time names from here and
    compiling its patterns lazily."""
    for line in _LIBRARY_IMPORTS:
        if code.count(line) != 1:
            raise ValueError(f"fastjsonschema's generated code no longer imports {line.strip()!r} once")
    code = code.replace(_LIBRARY_IMPORTS[0], "").replace(_LIBRARY_IMPORTS[1], _RUNTIME_IMPORT)
    return _lazy_patterns(code)


def _lazy_patterns(code: str) -> str:
    if "\nREGEX_PATTERNS = {" not in code:
        return code
    head, _, rest = code.partition("\nREGEX_PATTERNS = {")
    table, end, tail = rest.partition("\n}\n")
    table = table.replace("': re.compile(", "': lazy(")
    return head + "\nfrom renderer.lazyre import lazy\n\nREGEX_PATTERNS = {" + table + end + tail
