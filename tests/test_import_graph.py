"""Issue 17: no import cycle among the project's own modules, function-level imports included.

A function-level import hides a dependency from a reader and from tests/test_stages.py's stage order;
counting them here means a cycle cannot hide inside a function. ``if TYPE_CHECKING:`` blocks do not
run, so they do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO


def _modules() -> dict[str, Path]:
    found = {}
    for path in (REPO / "renderer").rglob("*.py"):
        if "_generated" in path.parts:
            continue
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every project module ``name`` imports at run time, at any depth of the file."""
    found: set[str] = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in modules and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_counting_function_level_imports() -> None:
    modules = _modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from renderer.b import x\n")
    b = tmp_path / "b.py"
    b.write_text("from renderer.a import f\nif TYPE_CHECKING:\n    from renderer.c import y\n")
    c = tmp_path / "c.py"
    c.write_text("from renderer.b import z\n")
    modules = {"renderer.a": a, "renderer.b": b, "renderer.c": c}
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert graph == {"renderer.a": {"renderer.b"}, "renderer.b": {"renderer.a"}, "renderer.c": {"renderer.b"}}
    assert cycles(graph) == [["renderer.a", "renderer.b"]]
