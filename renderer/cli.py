"""The command line: a thin Click layer. Each command builds its inputs, calls the core, and is the
only place that prints or picks an exit code (see ``renderer.errors`` for the table)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from renderer import __version__
from renderer.app import execute
from renderer.errors import EXIT_INPUT, EXIT_OK, Finding, RenderError


def guarded(fn: Callable[..., int | None]) -> Callable[..., None]:
    """Run a command body through ``renderer.app.execute`` (findings, exit codes, no tracebacks)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        debug = kwargs.pop("debug", False)
        execute(lambda: fn(*args, **kwargs), debug, passthrough=(click.exceptions.ClickException,))

    return click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")(wrapper)


_variants_opt = click.option("--variants", "variants", type=click.Path(file_okay=False, path_type=Path),
                             help="Extra variants folder; its files override the shipped ones.")
_root_opt = click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                         help="Overlay repository root (default: nearest .git, or the folder above clusters/).")
_strict_opt = click.option("--strict", is_flag=True, help="Treat warnings as errors.")


def _kubernetes_version(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from renderer.schemas.catalog import normalize_kubernetes_version

    try:
        return normalize_kubernetes_version(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_k8s_opt = click.option("--kubernetes-version", "-k", "kubernetes_version", callback=_kubernetes_version,
                        help="Kubernetes version whose schemas validate core kinds (default 1.33).")
_validator_opt = click.option("--validator", type=click.Choice(["auto", "builtin", "kubeconform"]), default="auto",
                              show_default=True,
                              help="Output schema validator: kubeconform from PATH, built-in, or auto.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cozy-render")
def main() -> None:
    """Render Cozystack Package CRs from per-cluster GitOps overlays."""


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write a kustomize directory (one file per object) instead of stdout; replaced atomically.")
@click.option("--all", "all_clusters", is_flag=True,
              help="PATH is an overlay tree: render every clusters/*/cluster.yaml (with --out: one folder each).")
@click.option("--check", "check_only", is_flag=True,
              help="With --out: write nothing, exit 1 if the folder is not what a render would write.")
@_variants_opt
@_root_opt
@_strict_opt
@_k8s_opt
@_validator_opt
@guarded
def render(path: Path, fmt: str, out: Path | None, all_clusters: bool, check_only: bool,
           variants: Path | None, root: Path | None, strict: bool, kubernetes_version: str | None,
           validator: str) -> int:
    """Render the cluster at PATH (a cluster folder or its cluster.yaml)."""
    from renderer.app import render_command

    if check_only and out is None:
        raise click.UsageError("--check needs --out DIR")
    return render_command(path, fmt, out, all_clusters, check_only, variants, root, strict,
                          kubernetes_version, validator)


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "json", "github"]), default="text",
              show_default=True)
@click.option("--all", "all_clusters", is_flag=True, help="PATH is an overlay tree: check every cluster.")
@_variants_opt
@_root_opt
@_strict_opt
@_k8s_opt
@_validator_opt
@guarded
def check(path: Path, fmt: str, all_clusters: bool, variants: Path | None, root: Path | None,
          strict: bool, kubernetes_version: str | None, validator: str) -> int:
    """Render, validate output schemas and run every rule; report findings (exit 1 on errors,
    or on warnings with --strict)."""
    from renderer.app import check_command, cluster_paths

    return check_command(cluster_paths(path, all_clusters), fmt, variants, root, strict, kubernetes_version,
                         validator)


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("key", required=False)
@_root_opt
@guarded
def explain(path: Path, key: str | None, root: Path | None) -> int:
    """Show which file and line set each overlay value (or only KEY, dotted: gpu.variant)."""
    from renderer.overlay import load_overlay

    overlay = load_overlay(path, root)
    prefix = tuple(int(p) if p.isdigit() else p for p in key.split(".")) if key else ()
    if key and overlay.get(*prefix, default=KeyError) is KeyError:
        raise RenderError([Finding("CLI-EXPLAIN", f"{key} is not set in the merged overlay", overlay.locate(()))])
    from renderer.yamlio import KEY, display_path

    click.echo(f"# layers, applied in order: {', '.join(display_path(p) for p in overlay.layers)}")
    for path_, loc in sorted(overlay.locs.items(), key=lambda kv: [str(x) for x in kv[0]]):
        if not path_ or KEY in path_ or path_[: len(prefix)] != prefix:
            continue
        value = overlay.get(*path_)
        if isinstance(value, (dict, list)):
            continue
        dotted = ".".join(str(p) for p in path_)
        import json

        click.echo(f"{dotted} = {json.dumps(value)}  # {loc}")
    return EXIT_OK


@main.group()
def schema() -> None:
    """Print published JSON Schemas."""


@schema.command("overlay")
def schema_overlay() -> None:
    """The ClusterOverlay JSON Schema (for yaml-language-server and editors)."""
    from renderer.overlay_schema import SCHEMA_FILE

    click.echo(SCHEMA_FILE.read_text(encoding="utf-8"), nl=False)


@main.command()
@click.argument("rule_id", required=False)
@guarded
def rules(rule_id: str | None) -> int:
    """List the rules, or explain one (cozy-render rules GPU-05)."""
    from renderer.rules import all_rules

    registry = all_rules()
    if rule_id is None:
        for r in registry.values():
            click.echo(f"{r.id:9} {r.severity:8} {r.summary}")
        return EXIT_OK
    found = registry.get(rule_id.upper())
    if found is None:
        raise RenderError([Finding("CLI-RULES", f"no rule {rule_id}; `cozy-render rules` lists them")], EXIT_INPUT)
    r = found
    from renderer.rules.docs import explanation_text

    click.echo(f"{r.id} ({r.severity}): {r.summary}\n\n{explanation_text(r)}\n\nSources:")
    for s in r.sources:
        click.echo(f"  - {s}")
    return EXIT_OK


def _add_module_commands() -> None:
    from renderer.commands import (
        ALL,
        cmp,  # noqa: F401 - importing it registers the cmp group in ALL
    )

    for command in ALL:
        main.add_command(command)


_add_module_commands()


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--all", "all_clusters", is_flag=True,
              help="PATH is an overlay tree: diff every cluster, each against its own context.")
@click.option("--snapshot", type=click.Path(exists=True, path_type=Path),
              help="Live state from `kubectl get -o yaml|json` output (a file or a folder) instead of a cluster.")
@click.option("--against", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Compare with a committed `render --out` folder instead of a cluster.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path),
              help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, or the in-cluster service account).")
@click.option("--context", help="kubeconfig context (default: live.context, the cluster's name, or the current one).")
@click.option("--server-side", is_flag=True,
              help="Compare with a server-side-apply dry run of each object (defaults and webhooks applied).")
@click.option("--field-manager", default="cozy-render", show_default=True, help="Field manager for --server-side.")
@click.option("--ignore", "ignore", multiple=True, metavar="[KIND[/NS]/NAME:]POINTER",
              help="Never report this JSON pointer (repeatable); adds to the overlay's diff.ignore.")
@click.option("--show-secrets", is_flag=True, help="Show Secret values instead of *** masks.")
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the diff (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 when there are differences (errors still exit >1).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds for all requests to one cluster, retries included.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Clusters diffed at once with --all.")
@_variants_opt
@_root_opt
@_k8s_opt
@guarded
def diff(path: Path, all_clusters: bool, snapshot: Path | None, against: Path | None, kubeconfig: Path | None,
         context: str | None, server_side: bool, field_manager: str, ignore: tuple[str, ...], show_secrets: bool,
         fmt: str, color: str, exit_zero: bool, timeout: float, concurrency: int, variants: Path | None,
         root: Path | None, kubernetes_version: str | None) -> int:
    """Show what syncing the render of PATH would change on the live cluster (exit 0 none, 1 differences,
    >1 error)."""
    from renderer.diff import DiffRequest, run

    return run(DiffRequest(path, all_clusters, variants, root, kubernetes_version, snapshot, against, kubeconfig,
                           context, server_side, field_manager, ignore, show_secrets, fmt, color, exit_zero,
                           timeout, concurrency))

if __name__ == "__main__":  # pragma: no cover
    main()
