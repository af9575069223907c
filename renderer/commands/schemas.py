"""``schema overlay`` (the overlay contract) and ``schemas export`` (output schemas for kubeconform)."""

from __future__ import annotations

import sys

from renderer.errors import EXIT_OK, Finding, Location, RenderError
from renderer.requests import SchemasExportRequest


def overlay_schema(layer: bool = False) -> int:
    from renderer.load.overlay_schema import LAYER_SCHEMA_FILE, SCHEMA_FILE

    sys.stdout.write((LAYER_SCHEMA_FILE if layer else SCHEMA_FILE).read_text(encoding="utf-8"))
    return EXIT_OK


def export(req: SchemasExportRequest) -> int:
    from renderer.check.schemas.export import CATALOG_TEMPLATE
    from renderer.check.schemas.export import export as write_schemas

    try:
        written = write_schemas(req.directory, kubernetes_versions=list(req.versions), core=req.core)
    except OSError as exc:
        raise RenderError([Finding("OUT-WRITE", f"cannot write schemas: {exc.strerror}",
                                   Location(str(exc.filename or req.directory)))]) from None
    sys.stdout.write(f"wrote {len(written)} schema files under {req.directory}\n"
                     "use with: kubeconform -schema-location default "
                     f"-schema-location '{req.directory}/{CATALOG_TEMPLATE}' FILE...\n")
    return EXIT_OK
