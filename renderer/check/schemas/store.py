"""Read the bundled schemas (package data; nothing outside the package is read at run time).

Only the slow paths use this module: a kind validated for a non-default Kubernetes version (compiled
in memory once), error details after a fast validator said no, and ``schemas export``.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from renderer.check.schemas import catalog
from renderer.check.schemas.convert import standalone

DRAFT4 = "http://json-schema.org/draft-04/schema#"


@cache
def core_bundle(kubernetes_version: str) -> dict[str, Any]:
    import gzip

    path = catalog.CORE_DIR / f"v{kubernetes_version}.json.gz"
    return json.loads(gzip.decompress(path.read_bytes()))


@cache
def crd_schema(api_version: str, kind: str) -> dict[str, Any]:
    path = catalog.CRD_SCHEMA_DIR / catalog.catalog_path(api_version, kind)
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def schema_for(api_version: str, kind: str, kubernetes_version: str) -> dict[str, Any]:
    """The self-contained schema (no ``$schema``: kubeconform and we both default to draft-04)."""
    found = catalog.lookup(api_version, kind)
    if found is None:
        raise KeyError((api_version, kind))
    sid, is_crd = found
    if is_crd:
        return crd_schema(api_version, kind)
    bundle = core_bundle(kubernetes_version)
    return standalone(bundle["kinds"][sid], bundle["definitions"])


def for_compiler(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as fastjsonschema must see it: draft-04 declared (its own default is draft-07)."""
    return {"$schema": DRAFT4, **schema}
