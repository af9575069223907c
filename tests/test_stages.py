"""The pipeline is straight: no module of an earlier stage imports a later one (load -> merge -> resolve
-> emit -> check -> output), and nothing in the core imports the command layer."""

from __future__ import annotations

import ast

from tests.conftest import REPO

# Stage of each core module: the stage packages (renderer/load, resolve, emit, check, output) cover
# their submodules. Shared leaf modules (errors, tree, model) sit at the stage where they are first
# needed; the YAML writer (renderer/output/yaml.py, emitter.py) asks the loader how go-yaml reads a string.
# The generated validators' run-time names (jsonschema_runtime) serve the overlay's validation first.
STAGES = [
    ("load", ["renderer.errors", "renderer.escape", "renderer.lazyre", "renderer.lightimport", "renderer.tree",
              "renderer.load", "renderer._generated", "renderer.jsonschema_runtime",
              # the one folder walker (--variants is read while loading) and child processes: leaves
              "renderer.walk", "renderer.childproc"]),
    ("resolve", ["renderer.model", "renderer.resolve", "renderer.platform_chart"]),
    ("emit", ["renderer.emit"]),
    ("check", ["renderer.check", "renderer.codes", "renderer.registry", "renderer.executables"]),
    # The start-up budget (renderer.startup_budget) is plain data for the docs and the tests, like the
    # reference tables: it imports nothing.
    ("output", ["renderer.output", "renderer.formats", "renderer.docs_reference", "renderer.startup_budget"]),
    # The requests are plain data the Click layer and the fast path build and the drivers read
    # (diff, doctor and preview take theirs whole), so they sit with the drivers.
    ("drive", ["renderer.requests", "renderer.pipeline", "renderer.batch", "renderer.cache", "renderer.cmp",
               "renderer.diff", "renderer.inputs", "renderer.effective", "renderer.doctor", "renderer.preview",
               "renderer.fanout", "renderer.shard", "renderer.shard_report"]),
]
# The resident renderer (renderer.daemon) serves `cmp generate` by running the CLI itself in its workers.
COMMAND_LAYER = ("renderer.cli", "renderer.entry", "renderer.runner", "renderer.streams", "renderer.report",
                 "renderer.commands", "renderer.daemon")


def stage_of(module: str) -> int | None:
    for index, (_, prefixes) in enumerate(STAGES):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return None


def imports_of(path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.startswith("renderer")}


def core_modules() -> dict[str, object]:
    out = {}
    for path in sorted((REPO / "renderer").rglob("*.py")):
        if "_generated" in path.parts:
            continue
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def test_every_core_module_has_a_stage_or_is_the_command_layer() -> None:
    unplaced = [m for m in core_modules() if stage_of(m) is None and not m.startswith(COMMAND_LAYER)
                and m not in ("renderer", "renderer.__main__", "renderer.generate", "renderer.generated_files")]
    assert unplaced == []


def test_no_stage_imports_a_later_stage() -> None:
    backwards = []
    for module, path in core_modules().items():
        mine = stage_of(module)
        if mine is None:
            continue
        for imported in imports_of(path):
            theirs = stage_of(imported)
            if imported.startswith(COMMAND_LAYER):
                backwards.append(f"{module} imports the command layer ({imported})")
            elif theirs is not None and theirs > mine:
                backwards.append(f"{module} ({STAGES[mine][0]}) imports {imported} ({STAGES[theirs][0]})")
    assert backwards == []


def test_the_scan_sees_local_imports(tmp_path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from renderer.emit import emit\n    import renderer.check.rules.gpu\n")
    assert imports_of(module) == {"renderer.emit", "renderer.emit.emit", "renderer.check.rules.gpu"}
    assert stage_of("renderer.emit") > stage_of("renderer.load.overlay")  # type: ignore[operator]
