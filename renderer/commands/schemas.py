"""``schema overlay`` (the overlay contract), ``schema output NAME`` (the JSON Schema of a command's
``-o json``) and ``schemas export`` (output schemas for kubeconform)."""

from __future__ import annotations

import sys
from pathlib import Path

from renderer import output
from renderer.check.schemas.export import CATALOG_TEMPLATE, export_files
from renderer.errors import EXIT_OK, Finding, Location, RenderError
from renderer.escape import printable, quote
from renderer.load.overlay_schema import LAYER_SCHEMA_FILE, SCHEMA_FILE
from renderer.load.yamlio import display_path
from renderer.requests import SchemasExportRequest


def overlay_schema(layer: bool = False) -> int:
    sys.stdout.write((LAYER_SCHEMA_FILE if layer else SCHEMA_FILE).read_text(encoding="utf-8"))
    return EXIT_OK


OUTPUT_SCHEMAS = Path(__file__).resolve().parent.parent / "data" / "output-schemas"
# Every command with a JSON output, by the name `schema output NAME` takes: the schema files shipped in
# renderer/data/output-schemas/ (a schema added there is published without a second list to keep).
OUTPUTS = tuple(sorted(p.name.removesuffix(".schema.json") for p in OUTPUT_SCHEMAS.glob("*.schema.json")))


def output_schema_file(name: str) -> Path:
    return OUTPUT_SCHEMAS / f"{name}.schema.json"


def output_schema(name: str) -> int:
    sys.stdout.write(output_schema_file(name).read_text(encoding="utf-8"))
    return EXIT_OK


def _refuse_outside_repository(directory: Path) -> None:
    """A folder named inside a repository stays inside it (no committed symlink leads the export out),
    and out of its ``clusters/``, where every folder is taken for a cluster (issue 25 item 6).
    ``write_tree`` knows no repository here: an export reads no overlay."""
    import os

    lexical = Path(os.path.abspath(directory))
    root = next((f for f in lexical.parents if (f / ".git").exists()), None)
    if root is None:
        return
    real, real_root = Path(os.path.realpath(lexical)), Path(os.path.realpath(root))
    if real != real_root and real_root not in real.parents:
        reason = f"leads through a symlink to {quote(real)}, outside the repository {quote(display_path(root))}"
    elif any(c == real or c in real.parents for c in (real_root / "clusters",)):
        reason = f"is inside {quote(display_path(root / 'clusters'))}, where every folder is a cluster"
    else:
        return
    raise RenderError([Finding("OUT-UNSAFE", f"{quote(display_path(directory))} {reason}; refusing to write there",
                               Location(display_path(directory)))])


def export(req: SchemasExportRequest) -> int:
    """Write the schema folder through the one guarded writer: replaced whole and atomically, only when
    empty or marked by an earlier export (``.cozy-render-schemas``), never through a symlink or into .git."""
    _refuse_outside_repository(req.directory)
    files = export_files(req.directory, kubernetes_versions=list(req.versions), core=req.core)
    output.write_tree(req.directory, {path.relative_to(req.directory).as_posix(): text for path, text in files.items()},
                      mark=(output.SCHEMAS_MARK, output.SCHEMAS_MARK_TEXT), legacy=None)
    import shlex

    sys.stdout.write(f"wrote {len(files)} schema files under {quote(req.directory)}\n"
                     "use with: kubeconform -schema-location default "
                     f"-schema-location {printable(shlex.quote(f'{req.directory}/{CATALOG_TEMPLATE}'))} FILE...\n")
    return EXIT_OK
