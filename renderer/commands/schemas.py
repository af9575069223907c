"""``schema overlay`` (the overlay contract), ``schema output NAME`` (the JSON Schema of a command's
``-o json``) and ``schemas export`` (output schemas for kubeconform)."""

from __future__ import annotations

import sys
from pathlib import Path

from renderer.errors import EXIT_OK
from renderer.requests import SchemasExportRequest


def overlay_schema(layer: bool = False) -> int:
    from renderer.load.overlay_schema import LAYER_SCHEMA_FILE, SCHEMA_FILE

    sys.stdout.write((LAYER_SCHEMA_FILE if layer else SCHEMA_FILE).read_text(encoding="utf-8"))
    return EXIT_OK


OUTPUT_SCHEMAS = Path(__file__).resolve().parent.parent / "data" / "output-schemas"
# Every command with a JSON output, by the name `schema output NAME` takes (renderer/data/output-schemas/).
OUTPUTS = ("check", "diff", "effective", "explain", "inputs", "ls", "render", "rules")


def output_schema_file(name: str) -> Path:
    return OUTPUT_SCHEMAS / f"{name}.schema.json"


def output_schema(name: str) -> int:
    sys.stdout.write(output_schema_file(name).read_text(encoding="utf-8"))
    return EXIT_OK


def export(req: SchemasExportRequest) -> int:
    """Write the schema folder through the one guarded writer: replaced whole and atomically, only when
    empty or marked by an earlier export (``.cozy-render-schemas``), never through a symlink or into .git."""
    from renderer import output
    from renderer.check.schemas.export import CATALOG_TEMPLATE, export_files

    files = export_files(req.directory, kubernetes_versions=list(req.versions), core=req.core)
    output.write_tree(req.directory, {path.relative_to(req.directory).as_posix(): text for path, text in files.items()},
                      mark=(output.SCHEMAS_MARK, output.SCHEMAS_MARK_TEXT), legacy=None)
    import shlex

    from renderer.escape import printable, quote

    sys.stdout.write(f"wrote {len(files)} schema files under {quote(req.directory)}\n"
                     "use with: kubeconform -schema-location default "
                     f"-schema-location {printable(shlex.quote(f'{req.directory}/{CATALOG_TEMPLATE}'))} FILE...\n")
    return EXIT_OK
