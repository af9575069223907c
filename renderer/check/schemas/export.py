"""Write our schemas in kubeconform's directory layouts (``cozy-render schemas export``, and the runner).

Two layouts, both written by ``export``:

- kubeconform's default-registry layout, what ``-schema-location DIR`` (a base without ``.json``)
  expands to: ``DIR/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/``
  ``{{ .ResourceKind }}{{ .KindSuffix }}.json``, e.g. ``master-standalone/package-cozystack-v1alpha1.json``.
  CRD schemas go into both the plain and the ``-strict`` folder (openapi2jsonschema output does not
  depend on ``-strict``); core kinds, when asked for, only into the plain one (ours are the
  non-strict flavour);
- the CRDs-catalog layout ``DIR/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json``,
  e.g. ``cozystack.io/package_v1alpha1.json``, which does not depend on the Kubernetes version.
"""

from __future__ import annotations

import json
from pathlib import Path

from renderer.check.schemas import catalog, store

CATALOG_TEMPLATE = "{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"


def normalized_version(version: str) -> str:
    """``{{ .NormalizedKubernetesVersion }}``: ``master`` stays, ``1.33.0`` becomes ``v1.33.0``."""
    return "master" if version == "master" else "v" + version


def export(dest: Path, *, kubernetes_versions: list[str], core: bool = False,
           catalog_layout: bool = True) -> list[Path]:
    """Write the files; returns them sorted. Versions are ``master`` or bundled ``X.Y.Z`` ones."""
    files = export_files(dest, kubernetes_versions=kubernetes_versions, core=core, catalog_layout=catalog_layout)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return sorted(files)


def export_files(dest: Path, *, kubernetes_versions: list[str], core: bool = False,
                 catalog_layout: bool = True) -> dict[Path, str]:
    """What ``export`` writes: path under ``dest`` -> content (``schemas export`` writes it through the
    guarded writer, renderer.output.write_tree)."""
    files: dict[Path, str] = {}
    crds = {key: _dump(store.crd_schema(*key)) for key in sorted(catalog.CRD_KINDS)}
    for version in kubernetes_versions:
        for strict in ("", "-strict"):
            folder = dest / f"{normalized_version(version)}-standalone{strict}"
            for (api_version, kind), text in crds.items():
                files[folder / f"{catalog.schema_id(api_version, kind)}.json"] = text
            if core and not strict and version != "master":
                for api_version, kind in catalog.CORE_KINDS:
                    text = _dump(store.schema_for(api_version, kind, version))
                    files[folder / f"{catalog.schema_id(api_version, kind)}.json"] = text
    if catalog_layout:
        for (api_version, kind), text in crds.items():
            files[dest / catalog.catalog_path(api_version, kind)] = text
    return files


def _dump(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"
