"""Run a real ``kubeconform`` binary over the rendered objects and read its JSON report.

Each object is written to its own file (``000007.json``: kubeconform reads JSON as YAML), so a
result's ``filename`` maps back to exactly one object; kubeconform's own report has no namespace.
Our schemas go to a temporary directory in kubeconform's default-registry layout and are passed
as ``-schema-location DIR``; nothing is fetched over the network. ``-ignore-missing-schemas``
skips kinds we have no schema for, as the built-in validator does.

Output contract (kubeconform v0.7.0 ``pkg/output/json.go``): one JSON object
``{"resources": [{"filename", "kind", "name", "version", "status", "msg", "validationErrors": [{"path", "msg"}]}]}``;
without ``-verbose`` only ``statusInvalid`` and ``statusError`` resources are listed. Exit code 0
means all valid, 1 means an invalid resource or an error; there are no other codes.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from renderer.check.schemas.export import export
from renderer.check.schemas.validator import KEY, Path_, SchemaError
from renderer.executables import on_path

TIMEOUT_SECONDS = 300


class KubeconformFailed(Exception):
    """kubeconform did not produce a report we can read (crash, unknown flag, timeout)."""


def find() -> str | None:
    return on_path("kubeconform")


def command(binary: str, schemas: Path, objects: Path, kubernetes_version: str) -> list[str]:
    return [binary, "-schema-location", str(schemas), "-kubernetes-version", kubernetes_version,
            "-ignore-missing-schemas", "-output", "json", str(objects)]


def run(objects: list[dict[str, Any]], kubernetes_version: str,
        binary: str | None = None) -> list[tuple[int, SchemaError]]:
    """``(index into objects, error)`` for every problem kubeconform reports."""
    binary = binary or find()
    if binary is None:
        raise KubeconformFailed("kubeconform is not on PATH")
    with tempfile.TemporaryDirectory(prefix="cozy-render-kubeconform-") as tmp:
        schemas, docs = Path(tmp, "schemas"), Path(tmp, "objects")
        export(schemas, kubernetes_versions=[kubernetes_version], core=True, catalog_layout=False)
        docs.mkdir()
        for i, obj in enumerate(objects):
            (docs / f"{i:06d}.json").write_text(json.dumps(obj, default=str), encoding="utf-8")
        try:
            proc = subprocess.run(command(binary, schemas, docs, kubernetes_version), capture_output=True,
                                  text=True, timeout=TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KubeconformFailed(f"could not run {binary}: {exc}") from None
    if proc.returncode not in (0, 1):
        raise KubeconformFailed(f"kubeconform exited {proc.returncode}: {_first_line(proc.stderr or proc.stdout)}")
    try:
        report = json.loads(proc.stdout)
        resources = report["resources"]
    except (ValueError, KeyError, TypeError):
        raise KubeconformFailed(f"kubeconform printed no JSON report: {_first_line(proc.stderr or proc.stdout)}") \
            from None
    return parse_resources(resources, objects)


def parse_resources(resources: list[dict[str, Any]], objects: list[dict[str, Any]]) -> list[tuple[int, SchemaError]]:
    out: list[tuple[int, SchemaError]] = []
    for res in resources:
        status = res.get("status")
        if status not in ("statusInvalid", "statusError"):
            continue
        stem = Path(str(res.get("filename", ""))).stem
        if not stem.isdigit() or int(stem) >= len(objects):
            raise KubeconformFailed(f"kubeconform reported an unknown file {res.get('filename')!r}")
        index = int(stem)
        obj = objects[index]
        causes = res.get("validationErrors") or []
        if status == "statusInvalid" and causes:
            for cause in causes:
                path = parse_pointer(str(cause.get("path", "")), obj)
                message = str(cause.get("msg", ""))
                out.append((index, SchemaError(path, message, _focus(path, message))))
        else:
            out.append((index, SchemaError((), str(res.get("msg", status)), ())))
    return sorted(out, key=lambda item: item[0])


_ADDITIONAL = re.compile(r"^additional propert(?:y|ies) '([^']*)'")


def _focus(path: Path_, message: str) -> Path_:
    """Where the built-in validator would point: the extra key itself, or the key of the object lacking one."""
    match = _ADDITIONAL.match(message)
    if match:
        return path + (match.group(1), KEY)
    if message.startswith("missing propert") and path:
        return path + (KEY,)
    return path


def parse_pointer(text: str, obj: Any) -> Path_:
    """A JSON pointer back to a path; a segment is a list index only where the object has a list."""
    if text in ("", "/"):
        return ()
    node = obj
    path: list[Any] = []
    for raw in text.lstrip("/").split("/"):
        part: Any = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit():
            part = int(part)
            node = node[part] if part < len(node) else None
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            node = None
        path.append(part)
    return tuple(path)


def _first_line(text: str) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[0][:300] if lines else "(no output)"
