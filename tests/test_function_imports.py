"""Function-level imports only where the start-up budget names them (renderer.startup_budget.FUNCTION_IMPORTS,
docs/startup-budget.md): an import inside a function hides a dependency from a reader, so each one of
cozy-render's own modules or of a third-party library needs a reason (the start-up path, an optional
dependency, breaking a cycle), or is marked "pending hoist". Standard-library imports are not counted."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import renderer
from renderer.startup_budget import CYCLE, FUNCTION_IMPORTS, HIT_MODULES, REASONS, START_UP
from tests.test_startup_imports import loaded

PACKAGE = Path(renderer.__file__).resolve().parent  # the checkout's, or the installed wheel's
STANDARD = frozenset(sys.stdlib_module_names)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def function_imports(path: Path) -> set[tuple[str, str]]:
    """(module, imported) for each import inside a function (at any depth) of ``path``."""
    module = _module_name(path)
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if in_function and isinstance(child, ast.Import):
                found.update((module, alias.name) for alias in child.names)
            elif in_function and isinstance(child, ast.ImportFrom):
                found.add((module, _absolute(child, module, path.name == "__init__.py")))
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return {(m, imported) for m, imported in found
            if imported.split(".")[0] == "renderer" or imported.split(".")[0] not in STANDARD}


def all_function_imports() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_generated" not in path.relative_to(PACKAGE).parts:
            found |= function_imports(path)
    return found


def test_every_function_level_import_is_on_the_budget_and_every_entry_is_used() -> None:
    allowed = {(module, imported) for module, imported, _ in FUNCTION_IMPORTS}
    found = all_function_imports()
    assert sorted(found - allowed) == [], ("move these imports to the top of their module, or name them in "
                                           "renderer.startup_budget.FUNCTION_IMPORTS with a reason")
    assert sorted(allowed - found) == [], "entries nothing imports any more: remove them"


def test_each_entry_is_named_once_with_a_known_reason() -> None:
    pairs = [(module, imported) for module, imported, _ in FUNCTION_IMPORTS]
    assert len(pairs) == len(set(pairs))
    assert {reason for _, _, reason in FUNCTION_IMPORTS} <= set(REASONS)


def test_a_cycle_reason_names_an_import_inside_a_cycle() -> None:
    """tests/test_import_graph.py counts function-level imports, so a cycle such an import breaks at
    import time is still one that test reports: the entry says where to cut it."""
    from tests.test_import_graph import _modules, cycles, imports_of

    modules = _modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    in_cycles = {member for component in cycles(graph) for member in component}
    broken = [(module, imported) for module, imported, reason in FUNCTION_IMPORTS if reason == CYCLE]
    assert [pair for pair in broken if not set(pair) <= in_cycles] == []


def test_a_start_up_reason_names_a_module_on_the_start_up_path(samples: Path) -> None:
    """"start-up path" holds only for a module a cold render, `cmp generate` or a cache hit loads, or the
    Click layer (each command imports its own modules, not every command's)."""
    _, modules = loaded(["render", "clusters/gpu-apt-01"], samples)
    _, cmp_modules = loaded(["cmp", "generate"], samples / "clusters" / "gpu-apt-01",
                            {"ARGOCD_APP_SOURCE_PATH": "clusters/gpu-apt-01"})
    on_path = modules | cmp_modules | set(HIT_MODULES) | {"renderer.cli"}
    claimed = {module for module, _, reason in FUNCTION_IMPORTS if reason == START_UP}
    assert sorted(claimed - on_path) == [], "not on the start-up path: mark them pending hoist, or hoist them"


def test_the_lint_finds_imports_in_nested_functions_and_relative_ones(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "renderer"
    (package / "sub").mkdir(parents=True)
    source = package / "sub" / "mod.py"
    source.write_text("import json\nfrom renderer import top\n\ndef f():\n    import json\n    from . import near\n"
                      "    def g():\n        from ..x import y\n        import click\n    return lambda: __import__('z')\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert function_imports(source) == {("renderer.sub.mod", "renderer.sub"), ("renderer.sub.mod", "renderer.x"),
                                        ("renderer.sub.mod", "click")}


def test_no_function_level_import_is_waiting_to_be_hoisted() -> None:
    """Every remaining entry has a reason; "pending hoist" was the to-do list, and it is done."""
    from renderer.startup_budget import PENDING

    assert [(module, imported) for module, imported, reason in FUNCTION_IMPORTS if reason == PENDING] == []
