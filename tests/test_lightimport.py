"""renderer.lightimport and renderer.jsonschema_runtime: the validators' run-time names without
fastjsonschema's compilers, and the same classes once the whole library is imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from renderer import jsonschema_runtime


def _run(code: str, path: Path | None = None) -> str:
    env_path = [str(path)] if path else []
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={"PYTHONPATH": ":".join([*env_path, *sys.path])}, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_runtime_skips_the_compilers_and_the_whole_library_still_works() -> None:
    out = _run("""
        import sys
        from renderer import jsonschema_runtime as rt
        light = sorted(m for m in sys.modules if m.startswith("fastjsonschema") or m == "decimal")
        import fastjsonschema
        validate = fastjsonschema.compile({"type": "object", "required": ["a"]})
        try:
            validate({})
        except rt.JsonSchemaValueException as exc:
            caught = type(exc).__name__
        same = rt.JsonSchemaValueException is fastjsonschema.JsonSchemaValueException
        print(light, caught, same, fastjsonschema.VERSION == sys.modules["fastjsonschema.version"].VERSION)
    """)
    assert out == "['fastjsonschema', 'fastjsonschema.exceptions'] JsonSchemaValueException True True"


def test_a_package_init_runs_once_for_threads_that_race_to_it(tmp_path: Path) -> None:
    package = tmp_path / "slowpkg"
    package.mkdir()
    (package / "part.py").write_text("VALUE = 1\n")
    (package / "__init__.py").write_text(textwrap.dedent("""
        import time
        RUNS = __import__("builtins").__dict__.setdefault("slowpkg_runs", [])
        RUNS.append(1)
        time.sleep(0.2)
        from .part import VALUE
        READY = True
    """))
    out = _run("""
        import threading
        from renderer.lightimport import submodule
        part = submodule("slowpkg", "part")
        import slowpkg, builtins
        seen = []
        threads = [threading.Thread(target=lambda: seen.append(slowpkg.READY)) for _ in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(seen, len(builtins.slowpkg_runs), slowpkg.part is part)
        try:
            slowpkg.MISSING
        except AttributeError as exc:
            print(exc)
    """, tmp_path)
    assert out.splitlines() == ["[True, True, True, True] 1 True", "module 'slowpkg' has no attribute 'MISSING'"]


def test_decimal_stand_in_answers_as_decimal_does() -> None:
    import decimal

    stand_in = jsonschema_runtime.Decimal
    assert isinstance(decimal.Decimal("1.5"), stand_in)
    assert not isinstance(1, stand_in) and not isinstance(1.5, stand_in) and not isinstance("1", stand_in)
    assert isinstance(1.5, (int, stand_in)) is False and isinstance(2, (float, stand_in)) is False
    made = stand_in("0.1")
    assert type(made) is decimal.Decimal and made == decimal.Decimal("0.1")


def test_rewrite_refuses_code_it_does_not_recognise() -> None:
    import fastjsonschema

    code = fastjsonschema.compile_to_code({"type": "string", "pattern": "^a+$"})
    rewritten = jsonschema_runtime.rewrite(code)
    assert "from decimal" not in rewritten and "from fastjsonschema" not in rewritten
    assert "re.compile(" not in rewritten.partition("REGEX_PATTERNS = {")[2].partition("\n}")[0]
    namespace: dict[str, object] = {}
    exec(compile(rewritten, "<generated>", "exec"), namespace)
    validate = namespace["validate"]
    assert callable(validate) and validate("aaa") == "aaa"
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        validate("b")
    with pytest.raises(ValueError, match="no longer imports"):
        jsonschema_runtime.rewrite(code.replace("from decimal import Decimal\n", ""))
