"""The command line: a thin Click skin. Each command turns its arguments into a request
(``renderer.requests``) and hands it to a command body (``renderer.commands``) through the one runner
(``renderer.runner.execute``), which prints findings and picks the exit code.

Options several commands share are declared once, in ``SHARED``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from renderer import __version__


def _kubernetes_version(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from renderer.schemas.catalog import normalize_kubernetes_version

    try:
        return normalize_kubernetes_version(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


SHARED: dict[str, Callable[[Any], Any]] = {
    "variants": click.option("--variants", "variants", type=click.Path(file_okay=False, path_type=Path),
                             help="Extra variants folder; its files override the shipped ones."),
    "root": click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                         help="Overlay repository root (default: nearest .git, or the folder above clusters/)."),
    "strict": click.option("--strict", is_flag=True, help="Treat warnings as errors."),
    "kubernetes_version": click.option("--kubernetes-version", "-k", "kubernetes_version",
                                       callback=_kubernetes_version,
                                       help="Kubernetes version whose schemas validate core kinds (default 1.33)."),
    "validator": click.option("--validator", type=click.Choice(["auto", "builtin", "kubeconform"]), default="auto",
                              show_default=True,
                              help="Output schema validator: kubeconform from PATH, built-in, or auto."),
    "all_clusters": click.option("--all", "all_clusters", is_flag=True,
                                 help="PATH is an overlay tree: every clusters/*/cluster.yaml."),
    "path": click.argument("path", type=click.Path(exists=True, path_type=Path)),
}


def shared(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Apply the shared options ``names`` (in the order given, as they appear in --help)."""

    def apply(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in reversed(names):
            fn = SHARED[name](fn)
        return fn

    return apply


def runs(fn: Callable[..., int | None]) -> Callable[..., None]:
    """Add --debug and run the command body through the runner (findings, exit codes, no tracebacks)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from renderer.runner import execute

        debug = kwargs.pop("debug", False)
        execute(lambda: fn(*args, **kwargs), debug, passthrough=(click.exceptions.ClickException,))

    return click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")(wrapper)


def _needs_out(check_only: bool, out: Path | None) -> None:
    if check_only and out is None:
        raise click.UsageError("--check needs --out DIR")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cozy-render")
def main() -> None:
    """Render Cozystack Package CRs from per-cluster GitOps overlays."""


@main.command()
@shared("path")
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write a kustomize directory (one file per object) instead of stdout; replaced atomically.")
@click.option("--all", "all_clusters", is_flag=True,
              help="PATH is an overlay tree: render every clusters/*/cluster.yaml (with --out: one folder each).")
@click.option("--check", "check_only", is_flag=True,
              help="With --out: write nothing, exit 1 if the folder is not what a render would write.")
@shared("variants", "root", "strict", "kubernetes_version", "validator")
@runs
def render(**options: Any) -> int:
    """Render the cluster at PATH (a cluster folder or its cluster.yaml)."""
    from renderer.commands import render as command
    from renderer.requests import RenderRequest

    _needs_out(options["check_only"], options["out"])
    return command.run(RenderRequest(**options))


@main.command()
@shared("path")
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "json", "github"]), default="text",
              show_default=True)
@click.option("--all", "all_clusters", is_flag=True, help="PATH is an overlay tree: check every cluster.")
@shared("variants", "root", "strict", "kubernetes_version", "validator")
@runs
def check(**options: Any) -> int:
    """Render, validate output schemas and run every rule; report findings (exit 1 on errors,
    or on warnings with --strict)."""
    from renderer.commands import check as command
    from renderer.requests import CheckRequest

    return command.run(CheckRequest(**options))


@main.command()
@shared("path")
@click.argument("key", required=False)
@shared("root")
@runs
def explain(**options: Any) -> int:
    """Show which file and line set each overlay value (or only KEY, dotted: gpu.variant)."""
    from renderer.commands import explain as command
    from renderer.requests import ExplainRequest

    return command.run(ExplainRequest(**options))


@main.command()
@click.argument("code", required=False)
@runs
def rules(code: str | None) -> int:
    """List every rule and code, or explain one (cozy-render rules GPU-05, cozy-render rules OVL-YAML)."""
    from renderer.commands import rules as command
    from renderer.requests import RulesRequest

    return command.run(RulesRequest(code))


@main.command("rules-doc")
@runs
def rules_doc() -> int:
    """Print docs/rules.md, generated from the registry (python -m renderer.generate writes it)."""
    from renderer.commands import rules as command

    return command.run_doc()


@main.group()
def schema() -> None:
    """Print published JSON Schemas."""


@schema.command("overlay")
@runs
def schema_overlay() -> int:
    """The ClusterOverlay JSON Schema (for yaml-language-server and editors)."""
    from renderer.commands import schemas as command

    return command.overlay_schema()


def _schema_versions(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    from renderer.schemas.catalog import DEFAULT_KUBERNETES_VERSION, normalize_kubernetes_version

    if not values:
        return ("master", DEFAULT_KUBERNETES_VERSION)
    out = []
    for value in values:
        try:
            out.append(value if value == "master" else normalize_kubernetes_version(value))
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx, param) from None
    return tuple(dict.fromkeys(out))


@main.group()
def schemas() -> None:
    """Output schemas used to validate rendered objects (kubeconform-compatible)."""


@schemas.command("export")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-k", "--kubernetes-version", "versions", multiple=True, callback=_schema_versions,
              help="Write the default-registry layout for this version (repeatable; `master` allowed). "
                   "Default: master and the default Kubernetes version.")
@click.option("--core", is_flag=True,
              help="Also write our core-kind schemas (ConfigMap, DaemonSet, ...) for each version given (not master).")
@runs
def schemas_export(**options: Any) -> int:
    """Write Package, PackageSource and NetworkAttachmentDefinition schemas under DIRECTORY.

    Two layouts: DIR/{group}/{kind}_{version}.json (CRDs-catalog) and
    DIR/<version>-standalone[-strict]/<kind>-<group>-<version>.json (kubeconform's default registry).
    """
    from renderer.commands import schemas as command
    from renderer.requests import SchemasExportRequest

    return command.export(SchemasExportRequest(**options))


@main.command("node-config")
@shared("path")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write <cluster>/netplan/... or <cluster>/talos/... under DIR (replaced atomically) "
                   "instead of printing. Keep DIR outside any folder Flux or Argo CD applies.")
@shared("all_clusters")
@click.option("--check", "check_only", is_flag=True,
              help="With --out: write nothing, exit 1 if DIR is not what node-config would write.")
@shared("variants", "root")
@runs
def node_config(**options: Any) -> int:
    """Node bridge config for the cluster's vlans: netplan (host.os apt) or a Talos machine-config patch."""
    from renderer.commands import nodeconfig as command
    from renderer.requests import NodeConfigRequest

    _needs_out(options["check_only"], options["out"])
    return command.node_config(NodeConfigRequest(**options))


@main.command("vm-snippet")
@shared("path", "variants", "root")
@runs
def vm_snippet(**options: Any) -> int:
    """Print the vm-instance `networks:` values that attach a VM to each of the cluster's VLANs."""
    from renderer.commands import nodeconfig as command
    from renderer.requests import VmSnippetRequest

    return command.vm_snippet(VmSnippetRequest(**options))


@main.group("cmp")
def cmp() -> None:
    """Argo CD Config Management Plugin commands (run by argocd-cmp-server)."""


@cmp.command("generate")
@click.option("--path", "path", default=".", type=click.Path(exists=True, path_type=Path),
              help="Cluster folder (default: the working directory Argo CD sets).")
@runs
def cmp_generate(path: Path) -> int:
    """Print the Application's manifests to stdout (YAML stream)."""
    from renderer.commands import cmp as command
    from renderer.requests import CmpGenerateRequest

    return command.generate(CmpGenerateRequest.from_environment(path))


@cmp.command("parameters")
@runs
def cmp_parameters() -> int:
    """Print the parameter announcement (JSON) for plugin.yaml parameters.dynamic."""
    from renderer.commands import cmp as command

    return command.parameters()


if __name__ == "__main__":  # pragma: no cover
    main()
