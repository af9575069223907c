"""One helper each: a package's private names stay inside it, the names cozy-render and Cozystack agree
on are written once (``renderer.model``), and one walker reads a data tree by its path
(``renderer.tree.dig``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from renderer import model
from renderer.tree import dig
from tests.conftest import REPO


def _sources() -> dict[str, Path]:
    found = {}
    for path in sorted((REPO / "renderer").rglob("*.py")):
        if "_generated" in path.parts:
            continue
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _package(module: str, sources: dict[str, Path]) -> str:
    path = sources.get(module)
    return module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]


def test_no_module_imports_another_packages_private_name() -> None:
    sources = _sources()
    borrowed = []
    for module, path in sources.items():
        mine = _package(module, sources)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                    and node.module.startswith("renderer")):
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and _package(node.module, sources) != mine:
                    borrowed.append(f"{module}:{node.lineno} imports {node.module}.{alias.name}")
    assert borrowed == []


def _strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings (a docstring may name the value)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("name", ["JSON_API_VERSION", "GPU_OPERATOR", "HAMI"])
def test_a_shared_name_is_written_once_in_the_model(name: str) -> None:
    value = getattr(model, name)
    written = [f"{module}:{line}" for module, path in _sources().items() if module != "renderer.model"
               for line, text in _strings(path) if text == value]
    assert written == [], f"{value!r} is renderer.model.{name}"


def test_the_output_schemas_carry_the_api_version_the_code_writes() -> None:
    import json

    schemas = sorted((REPO / "renderer" / "data" / "output-schemas").glob("*.schema.json"))
    assert schemas
    for path in schemas:
        api = json.loads(path.read_text(encoding="utf-8")).get("properties", {}).get("apiVersion", {})
        if "const" in api and path.name != "render.schema.json":  # render's is a Kubernetes v1 List
            assert api["const"] == model.JSON_API_VERSION, path.name


def test_the_gpu_knobs_are_the_models() -> None:
    from renderer.check.rules import gpu as rules
    from renderer.resolve.features import gpu as feature

    assert set(model.VGPU_ONLY_KNOBS) <= set(model.GPU_KNOBS)
    assert not any(hasattr(m, n) for m in (rules, feature) for n in ("KNOBS", "FORWARDED_KNOBS"))


TREE = {"a": {"b": [10, {"c": None, "d": 0}]}, "e": "text"}


@pytest.mark.parametrize(("path", "expected"), [
    ((), TREE),
    (("a", "b", 0), 10),
    (("a", "b", 1, "d"), 0),
    (("a", "b", 1, "c"), None),  # present and null: the value, not the default
    (("a", "b", 1, "c", "x"), "default"),  # through a null
    (("a", "missing"), "default"),
    (("a", "b", 2), "default"),  # past the end
    (("a", "b", -1), "default"),  # no negative index
    (("a", "b", True), "default"),  # a bool is no index
    (("a", "b", "0"), "default"),  # a string is no index
    (("e", "x"), "default"),  # through a scalar
])
def test_dig_reads_a_tree_by_its_path(path: tuple[object, ...], expected: object) -> None:
    assert dig(TREE, *path, default="default") == expected


def test_dig_defaults_to_none() -> None:
    assert dig(TREE, "a", "missing") is None
    assert dig(None, "a") is None
