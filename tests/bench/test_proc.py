"""bench/proc.py: every pipeline stage its profiles report names a function that exists, so a stage
line never goes missing silently when a module moves."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.bench import BENCH, bench_module

RENDERER = BENCH.parent / "renderer"


def test_every_stage_names_a_function_of_the_package() -> None:
    for label, where in bench_module("proc").STAGES:
        file, _, function = where.partition(":")
        matches = [path for path in RENDERER.rglob(Path(file).name)
                   if path.parent.name == Path(file).parent.name]
        assert len(matches) == 1, f"{label}: {file} is not one file of renderer/"
        tree = ast.parse(matches[0].read_text(encoding="utf-8"))
        names = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        assert function in names, f"{label}: no function {function} in {matches[0]}"
