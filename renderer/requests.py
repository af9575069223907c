"""One request type per command: its inputs and their defaults, in one place.

The Click layer (``renderer.cli``) and the start-up fast path (``renderer.entry``) both build these,
so a default is never written twice. Command bodies (``renderer.commands.*``) take a request and
return an exit code. Requests are plain NamedTuples (no dataclasses: importing them costs the
start-up that Argo CD pays on every refresh).

The render cache key is derived from the whole request (``cache_fields``), so an option added here
is part of the key without anyone remembering to list it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class RenderRequest(NamedTuple):
    path: Path
    fmt: str = "yaml"
    out: Path | None = None
    all_clusters: bool = False
    check_only: bool = False
    variants: Path | None = None
    root: Path | None = None
    strict: bool = False
    kubernetes_version: str | None = None
    validator: str = "auto"


class CheckRequest(NamedTuple):
    path: Path
    fmt: str = "text"
    all_clusters: bool = False
    variants: Path | None = None
    root: Path | None = None
    strict: bool = False
    kubernetes_version: str | None = None
    validator: str = "auto"


class CmpGenerateRequest(NamedTuple):
    """What argocd-cmp-server hands the plugin: a working directory and environment variables."""

    path: Path = Path(".")
    parameters: str = ""  # ARGOCD_APP_PARAMETERS, raw JSON
    source_path: str = ""  # ARGOCD_APP_SOURCE_PATH, to find the repository root without .git

    @classmethod
    def from_environment(cls, path: Path = Path(".")) -> CmpGenerateRequest:
        return cls(path, os.environ.get("ARGOCD_APP_PARAMETERS", ""), os.environ.get("ARGOCD_APP_SOURCE_PATH", ""))


class ExplainRequest(NamedTuple):
    path: Path
    key: str | None = None
    root: Path | None = None


class RulesRequest(NamedTuple):
    code: str | None = None


class NodeConfigRequest(NamedTuple):
    path: Path
    out: Path | None = None
    all_clusters: bool = False
    check_only: bool = False
    variants: Path | None = None
    root: Path | None = None


class VmSnippetRequest(NamedTuple):
    path: Path
    variants: Path | None = None
    root: Path | None = None


class SchemasExportRequest(NamedTuple):
    directory: Path
    versions: tuple[str, ...] = ()
    core: bool = False


def cache_fields(request: NamedTuple) -> list[str]:
    """Every field of a request as text, for the render cache key (the command's name included)."""
    return [type(request).__name__, *(f"{name}={value!r}" for name, value in request._asdict().items())]
