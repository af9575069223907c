"""bench/proc.py: every pipeline stage its profiles report names a function that exists, so a stage
line never goes missing silently when a module moves."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
RENDERER = BENCH.parent / "renderer"


def _proc():  # bench/ is scripts, not a package: load the module by path (it imports nothing of bench/)
    spec = importlib.util.spec_from_file_location("bench_proc", BENCH / "proc.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_stage_names_a_function_of_the_package() -> None:
    for label, where in _proc().STAGES:
        file, _, function = where.partition(":")
        matches = [path for path in RENDERER.rglob(Path(file).name)
                   if path.parent.name == Path(file).parent.name]
        assert len(matches) == 1, f"{label}: {file} is not one file of renderer/"
        tree = ast.parse(matches[0].read_text(encoding="utf-8"))
        names = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        assert function in names, f"{label}: no function {function} in {matches[0]}"
