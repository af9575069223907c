"""One request type per command: its inputs and their defaults, in one place.

The Click layer (``renderer.cli``) and the start-up fast path (``renderer.entry``) both build these,
so a default is never written twice. Command bodies (``renderer.commands.*``) take a request and
return an exit code. Requests are plain NamedTuples (no dataclasses: importing them costs the
start-up that Argo CD pays on every refresh).

The render cache key of a Click command is derived from the whole request (``cache_fields``), so an
option added here is part of the key without anyone remembering to list it; the start-up fast path
keys on what it builds its request from, the raw arguments and the environment names it reads
(``renderer.cache.argv_fields``).

No ``from __future__ import annotations`` here: ``typing.NamedTuple`` turns each string annotation
into a ``ForwardRef``, which compiles it, ~0.25 M instructions per field; evaluated annotations cost
nothing (issue 24: about 8 % of a cold render's start-up for this module's 14 requests).
"""

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
    annotate: bool = False  # a trailing `# file:line` on each value (renderer.emit.provenance)
    verbose: bool = False  # --all on a terminal: every warning line, not one per distinct warning
    jobs: int = 0  # --all: worker processes (0: the cores available); output is the same as serial
    shard: str | None = None  # --shard K/N with --all: this runner's part of the fleet (renderer.shard)
    chart: str | None = None  # who judges the platform chart in the check stage: model | helm | auto
    helm: str | None = None  # the helm binary for --chart helm/auto (default: helm on PATH)


class CheckRequest(NamedTuple):
    path: Path
    fmt: str = "text"
    all_clusters: bool = False
    variants: Path | None = None
    root: Path | None = None
    strict: bool = False
    kubernetes_version: str | None = None
    validator: str = "auto"
    verbose: bool = False  # --all on a terminal: every warning line, not one per distinct warning
    chart: str | None = None  # model | helm | auto: who judges the platform chart (renderer.effective.choice)
    helm: str | None = None  # the helm binary for --chart helm/auto (default: helm on PATH)
    jobs: int = 0  # --all: worker processes (0: the cores available); findings are the same as serial
    shard: str | None = None  # --shard K/N with --all: this runner's part of the fleet (renderer.shard)


class CmpGenerateRequest(NamedTuple):
    """What argocd-cmp-server hands the plugin: a working directory and environment variables
    (which of them count, and which wins: ``renderer.cmp``)."""

    path: Path = Path(".")
    parameters: str = ""  # ARGOCD_APP_PARAMETERS, raw JSON
    source_path: str = ""  # ARGOCD_APP_SOURCE_PATH, to find the repository root without .git
    plugin_env: tuple[tuple[str, str], ...] = ()  # every ARGOCD_ENV_* variable (plugin env entries), sorted
    kube_version: str = ""  # KUBE_VERSION: the destination cluster's version, the default schema version

    @classmethod
    def from_environment(cls, path: Path = Path(".")) -> "CmpGenerateRequest":
        env = os.environ
        plugin_env = tuple(sorted((k, v) for k, v in env.items() if k.startswith("ARGOCD_ENV_")))
        return cls(path, env.get("ARGOCD_APP_PARAMETERS", ""), env.get("ARGOCD_APP_SOURCE_PATH", ""), plugin_env,
                   env.get("KUBE_VERSION", ""))


class InputsRequest(NamedTuple):
    path: Path
    all_clusters: bool = False
    fmt: str = "text"
    variants: Path | None = None
    root: Path | None = None


class ExplainRequest(NamedTuple):
    path: Path
    key: str | None = None  # a dotted overlay key; with rendered: KIND/NAME (or a JSON pointer)
    root: Path | None = None
    pointer: str | None = None  # with rendered: a JSON pointer inside the object
    rendered: bool = False
    fmt: str = "text"
    variants: Path | None = None


class InitRequest(NamedTuple):
    name: str
    os: str
    gpu: str = "none"
    hubble: bool = False
    vlans: tuple[str, ...] = ()  # ID:UPLINK:NAMESPACE[,NAMESPACE...]
    root: Path | None = None


class LsRequest(NamedTuple):
    path: Path
    fmt: str = "table"  # table | json
    sort: str = "name"
    errors_only: bool = False
    variants: Path | None = None
    root: Path | None = None
    jobs: int = 0  # worker processes (0: the cores available)
    shard: str | None = None  # --shard K/N: this runner's part of the fleet (renderer.shard)


class RulesRequest(NamedTuple):
    code: str | None = None
    fmt: str = "text"


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


class DiffRequest(NamedTuple):
    """Everything ``diff`` needs; the defaults here are the CLI's defaults."""

    path: Path
    all_clusters: bool = False
    variants: Path | None = None
    root: Path | None = None
    kubernetes_version: str | None = None
    snapshot: Path | None = None  # kubectl get -o yaml|json output: a file or a folder
    against: Path | None = None  # a committed `render --out` folder
    kubeconfig: Path | None = None
    context: str | None = None
    server_side: bool = False
    field_manager: str = "cozy-render"
    ignore: tuple[str, ...] = ()
    show_secrets: bool = False
    output: str = "text"  # text | json
    color: str = "auto"  # auto | always | never
    exit_zero: bool = False
    timeout: float = 60.0  # seconds per cluster, every request and retry included
    concurrency: int = 4  # clusters diffed at once with --all
    effective: bool = False  # compare the effective Package set (the platform chart's Packages too)
    helm: str | None = None  # for --effective: helm binary (default: helm on PATH)
    platform_chart: Path | None = None  # for --effective: a chart folder instead of the vendored one
    delivery: str = "argocd"  # argocd (cmp generate's output) | flux (render --out's, substitute mark included)



class EffectiveRequest(NamedTuple):
    path: Path
    fmt: str = "yaml"  # yaml | json | table
    helm: str | None = None
    platform_chart: Path | None = None
    variants: Path | None = None
    root: Path | None = None
    all_clusters: bool = False  # PATH is a tree: what a loop over its clusters prints
    jobs: int = 0  # worker processes with --all (0: the cores available)
    chart: str | None = None  # who says what the platform chart renders: model | helm | auto


def cache_fields(request: NamedTuple) -> list[str]:
    """Every field of a request as text, for the render cache key (the command's name included)."""
    return [type(request).__name__, *(f"{name}={value!r}" for name, value in request._asdict().items())]


class DoctorRequest(NamedTuple):
    """``cozy-render doctor``: the GPU route of each cluster, checked on the live cluster (read-only)."""

    path: Path
    all_clusters: bool = False
    variants: Path | None = None
    root: Path | None = None
    kubeconfig: Path | None = None
    context: str | None = None
    output: str = "text"  # text | json
    timeout: float = 60.0  # seconds per cluster, every request and retry included (as diff)
    concurrency: int = 4  # clusters read at once with --all (as diff)
    shard: str | None = None  # --shard K/N with --all: this runner's part of the fleet (renderer.shard)


class MergeRequest(NamedTuple):
    """``cozy-render merge``: the ``-o json`` reports of a run's shards (``--shard K/N``), joined."""

    reports: tuple[Path, ...]
    fmt: str | None = None  # None: the command's own default format
