"""Regenerate the committed schema data and validator modules (a development script).

    python -m renderer.check.schemas.build                 # CRD schemas + validator modules from committed data
    python -m renderer.check.schemas.build --check         # exit 1, listing files, when anything is stale
    python -m renderer.check.schemas.build --kubernetes-validate kubernetes_validate-1.37.0-py3-none-any.whl
                                                     # also re-import the core-kind bundles from that wheel

Inputs: ``data/crds/*.yaml`` (copies of the CRDs) and ``data/core/v*.json.gz`` (core kinds extracted
from the kubernetes-validate wheel; the wheel is only needed to refresh them). Outputs:
``data/crd-schemas/{group}/{kind}_{version}.json`` (kubeconform's openapi2jsonschema conversion) and
``renderer/_generated/schema_validators/*.py``: fastjsonschema code, one module per CRD kind and per
core kind of the default Kubernetes version, so a render imports only the validators of the kinds it
emits and generates no code. Other bundled versions are compiled in memory on first use.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import fastjsonschema
from ruamel.yaml import YAML

from renderer.check.schemas import catalog
from renderer.check.schemas.convert import core_bundle, crd_documents, crd_schemas, dump_schema, standalone
from renderer.check.schemas.store import for_compiler
from renderer.generated_files import refusal, stale_files, write_files
from renderer.jsonschema_runtime import rewrite

WHEEL_SCHEMA_ROOT = "kubernetes_validate/kubernetes-json-schema/"
SOURCE_FILE = catalog.CORE_DIR / "source.json"


def load_yaml_documents(text: str) -> list[Any]:
    """YAML 1.1, as upstream's PyYAML SafeLoader reads CRDs (``on``/``yes`` are booleans there)."""
    y = YAML(typ="safe", pure=True)
    y.version = (1, 1)
    return [d for d in y.load_all(text) if d is not None]


def crd_outputs() -> dict[Path, bytes]:
    out: dict[Path, bytes] = {}
    for (api_version, kind), filename in sorted(catalog.CRD_KINDS.items()):
        docs = crd_documents(load_yaml_documents((catalog.CRD_DIR / filename).read_text(encoding="utf-8")))
        matching = [d for d in docs if d["spec"]["names"]["kind"] == kind]
        if len(matching) != 1:
            raise SystemExit(f"{filename}: expected one CRD of kind {kind}, found {len(matching)}")
        crd = matching[0]
        group = crd["spec"]["group"]
        for name, schema in crd_schemas(crd).items():
            version = name[len(kind) + 1:-len(".json")]
            if f"{group}/{version}" == api_version:
                out[catalog.CRD_SCHEMA_DIR / catalog.catalog_path(api_version, kind)] = dump_schema(schema).encode()
        if catalog.CRD_SCHEMA_DIR / catalog.catalog_path(api_version, kind) not in out:
            raise SystemExit(f"{filename}: no schema for {api_version} {kind}")
    return out


def _gzip_json(data: Any) -> bytes:
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    buf = io.BytesIO()
    # mtime=0 and no file name: the same bundle always gives the same bytes.
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0, filename="") as fh:
        fh.write(raw)
    return buf.getvalue()


def core_outputs(wheel: Path) -> dict[Path, bytes]:
    """Bundles for every version the wheel ships (its ``vX.Y.Z-local`` folders, non-strict flavour)."""
    out: dict[Path, bytes] = {}
    wanted = catalog.core_ids()
    versions: list[str] = []
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        folders = sorted({n[len(WHEEL_SCHEMA_ROOT):].split("/")[0] for n in names if n.startswith(WHEEL_SCHEMA_ROOT)})
        for folder in folders:
            match = re.fullmatch(r"v(\d+\.\d+\.\d+)-local", folder)
            if not match:
                continue
            base = f"{WHEEL_SCHEMA_ROOT}{folder}/"
            defs = json.loads(zf.read(base + "_definitions.json"))["$defs"]
            roots = {}
            for (api_version, kind), sid in wanted.items():
                if base + sid + ".json" not in names:
                    raise SystemExit(f"{wheel.name}: {folder} has no {sid}.json ({api_version} {kind})")
                roots[sid] = json.loads(zf.read(base + sid + ".json"))
            out[catalog.CORE_DIR / f"v{match.group(1)}.json.gz"] = _gzip_json(core_bundle(roots, defs))
            versions.append(match.group(1))
    source = {
        "wheel": wheel.name,
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "flavour": "vX.Y.Z-local (non-strict)",
        "kinds": sorted(wanted.values()),
        "versions": sorted(versions, key=lambda v: tuple(int(p) for p in v.split("."))),
    }
    out[SOURCE_FILE] = (json.dumps(source, indent=2) + "\n").encode()
    return out


def schema_sha256(schema: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def module_source(schema: dict[str, Any], origin: str) -> str:
    code = fastjsonschema.compile_to_code(for_compiler(schema), use_default=False, detailed_exceptions=False)
    code = rewrite(code)
    header = (
        f'"""Generated by `python -m renderer.check.schemas.build` from {origin}; do not edit."""\n'
        "# ruff: noqa\n# fmt: off\n"
        f'SCHEMA_SHA256 = "{schema_sha256(schema)}"\n'
    )
    return header + code


def compiled_outputs(crd_files: dict[Path, bytes], core_files: dict[Path, bytes] | None = None) -> dict[Path, bytes]:
    """Validator modules: every CRD kind, and every core kind of the default Kubernetes version."""
    out: dict[Path, bytes] = {catalog.COMPILED_DIR / "__init__.py": (
        b'"""Generated validator modules (`python -m renderer.generate`); imported one per kind present."""\n'
    )}
    for api_version, kind in sorted(catalog.CRD_KINDS):
        path = catalog.CRD_SCHEMA_DIR / catalog.catalog_path(api_version, kind)
        schema = json.loads(crd_files[path])
        name = catalog.module_name(catalog.schema_id(api_version, kind), None)
        origin = f"data/crd-schemas/{catalog.catalog_path(api_version, kind)}"
        out[catalog.COMPILED_DIR / f"{name}.py"] = module_source(schema, origin).encode()
    version = catalog.DEFAULT_KUBERNETES_VERSION
    bundle_path = catalog.CORE_DIR / f"v{version}.json.gz"
    raw = (core_files or {}).get(bundle_path) or bundle_path.read_bytes()
    bundle = json.loads(gzip.decompress(raw))

    for _gvk, sid in sorted(catalog.core_ids().items()):
        schema = standalone(bundle["kinds"][sid], bundle["definitions"])
        name = catalog.module_name(sid, version)
        origin = f"data/core/v{version}.json.gz ({sid})"
        out[catalog.COMPILED_DIR / f"{name}.py"] = module_source(schema, origin).encode()
    return out


def expected_files(wheel: Path | None = None) -> dict[Path, bytes]:
    files = crd_outputs()
    core = core_outputs(wheel) if wheel else None
    if core:
        files.update(core)
    files.update(compiled_outputs(files, core))
    return files


OWNED = ((catalog.COMPILED_DIR, "*.py"), (catalog.CRD_SCHEMA_DIR, "**/*.json"))


def stale(files: dict[Path, bytes]) -> list[str]:
    """Files that differ from what the build would write, plus generated files it would delete."""
    return stale_files(files, OWNED, catalog.HERE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m renderer.check.schemas.build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale")
    parser.add_argument("--kubernetes-validate", type=Path, metavar="WHEEL",
                        help="kubernetes-validate wheel to (re-)extract the core-kind bundles from")
    args = parser.parse_args(argv)

    refused = refusal("python -m renderer.check.schemas.build")
    if refused:  # it writes into renderer/: never into an installed package
        print(refused, file=sys.stderr)
        return 2

    files = expected_files(args.kubernetes_validate)
    if args.check:
        problems = stale(files)
        for line in problems:
            print(f"stale: {line}", file=sys.stderr)
        return 1 if problems else 0
    for path in write_files(files, OWNED):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
