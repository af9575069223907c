"""renderer.lightimport and renderer.jsonschema_runtime: the validators' run-time names without the
libraries' heavy imports, and the same classes once the whole library is imported (issue 24)."""

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


def test_ruamel_yaml_version_is_read_as_its_init_states_it() -> None:
    """The safe constructor asks ruamel.yaml for version_info before its __init__ has run (yamlio)."""
    import ruamel.yaml

    from renderer.load import yamlio

    assert yamlio._stated_version(ruamel.yaml.__file__) == {"version_info": tuple(ruamel.yaml.version_info[:3])}


def test_overlays_read_without_the_yaml_front_end_as_with_it() -> None:
    """renderer.load.yamlio builds ruamel's C loader itself: the same events and node graph (tags, values,
    positions) as YAML(typ="safe"), `%YAML 1.1` documents included (ruamel's C loader resolves them by the
    1.2 rules too), without importing the front end."""
    out = _run("""
        import sys
        from renderer.load import yamlio
        text = ("%YAML 1.1\\n---\\na: yes\\nb: 010\\nc: 0o10\\nd: 1_000\\ne: 2001-12-14\\nf: .5\\ng: ~\\n"
                "h: !!str 5\\ni: &x {k: [1, 'q', \\"r\\"]}\\nj: *x\\n---\\n- [1, x]\\n- |\\n  block\\n")
        def shape(node):
            value = node.value
            if isinstance(value, list):
                value = [tuple(map(shape, v)) if isinstance(v, tuple) else shape(v) for v in value]
            return (type(node).__name__, node.tag, value, node.start_mark.line, node.start_mark.column,
                    getattr(node, "style", None), getattr(node, "flow_style", None))
        events = [(type(e).__name__, getattr(e, "value", None), e.start_mark.line) for e in yamlio._events(text)]
        nodes = [shape(n) for n in yamlio._nodes(text)[0]]
        light = yamlio.load_documents(text, "f.yaml")
        print("ruamel.yaml.main" in sys.modules, light[0][0]["a"], light[0][0]["b"], light[0][0]["h"])
        from ruamel.yaml import YAML
        y = YAML(typ="safe")
        same_events = events == [(type(e).__name__, getattr(e, "value", None), e.start_mark.line) for e in y.parse(text)]
        same_nodes = nodes == [shape(n) for n in y.compose_all(text)]
        print(same_events, same_nodes, len(events), len(nodes))
    """)
    assert out.splitlines() == ["False yes 10 5", "True True 42 2"]
