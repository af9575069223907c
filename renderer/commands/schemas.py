"""``schema overlay`` (the overlay contract) and ``schemas export`` (output schemas for kubeconform)."""

from __future__ import annotations

import sys

from renderer.errors import EXIT_OK
from renderer.requests import SchemasExportRequest


def overlay_schema(layer: bool = False) -> int:
    from renderer.load.overlay_schema import LAYER_SCHEMA_FILE, SCHEMA_FILE

    sys.stdout.write((LAYER_SCHEMA_FILE if layer else SCHEMA_FILE).read_text(encoding="utf-8"))
    return EXIT_OK


def export(req: SchemasExportRequest) -> int:
    """Write the schema folder through the one guarded writer: replaced whole and atomically, only when
    empty or marked by an earlier export (``.cozy-render-schemas``), never through a symlink or into .git."""
    from renderer import output
    from renderer.check.schemas.export import CATALOG_TEMPLATE, export_files

    files = export_files(req.directory, kubernetes_versions=list(req.versions), core=req.core)
    output.write_tree(req.directory, {path.relative_to(req.directory).as_posix(): text for path, text in files.items()},
                      mark=(output.SCHEMAS_MARK, output.SCHEMAS_MARK_TEXT), legacy=None)
    sys.stdout.write(f"wrote {len(files)} schema files under {req.directory}\n"
                     "use with: kubeconform -schema-location default "
                     f"-schema-location '{req.directory}/{CATALOG_TEMPLATE}' FILE...\n")
    return EXIT_OK
