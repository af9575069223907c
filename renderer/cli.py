"""The command line: a thin Click layer. Each command builds its inputs, calls the core, and is the
only place that prints or picks an exit code (see ``renderer.errors`` for the table)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from renderer import __version__
from renderer.errors import (
    ERROR,
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    WARNING,
    Finding,
    RenderError,
)


def _emit_findings(findings: list[Finding], fmt: str = "text") -> None:
    if fmt == "github":
        for f in findings:
            loc = f.location
            level = "error" if f.severity == ERROR else "warning"
            where = f" file={loc.path},line={loc.line},col={loc.col}" if loc and loc.line else \
                (f" file={loc.path}" if loc else "")
            click.echo(f"::{level}{where},title={f.code}::{f.message}", err=False)
        return
    for f in findings:
        click.echo(f.format(), err=True)


def guarded(fn: Callable[..., int | None]) -> Callable[..., None]:
    """Run a command body: RenderError -> one line per finding on stderr; bugs -> exit 4."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        debug = kwargs.pop("debug", False)
        try:
            code = fn(*args, **kwargs)
        except RenderError as exc:
            _emit_findings(exc.findings)
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            # The reader went away (`| head`); nothing useful can be said on a closed stdout.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_OK)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except click.exceptions.ClickException:
            raise
        except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into an exit code
            if debug:
                import traceback

                traceback.print_exc()
            click.echo(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", err=True)
            sys.exit(EXIT_INTERNAL)
        sys.exit(code or EXIT_OK)

    return click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")(wrapper)


_variants_opt = click.option("--variants", "variants", type=click.Path(file_okay=False, path_type=Path),
                             help="Extra variants folder; its files override the shipped ones.")
_root_opt = click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                         help="Overlay repository root (default: nearest .git, or the folder above clusters/).")
_strict_opt = click.option("--strict", is_flag=True, help="Treat warnings as errors.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cozy-render")
def main() -> None:
    """Render Cozystack Package CRs from per-cluster GitOps overlays."""


def _cluster_paths(path: Path, all_clusters: bool) -> list[Path]:
    if not all_clusters:
        return [path]
    clusters = path / "clusters" if (path / "clusters").is_dir() else path
    found = sorted(p.parent for p in clusters.glob("*/cluster.yaml"))
    if not found:
        raise click.UsageError(f"--all: no */cluster.yaml under {clusters}")
    return found


def _render_all(paths: list[Path], variants: Path | None, root: Path | None, strict: bool):  # noqa: ANN202
    from renderer.pipeline import render

    results, failures = [], []
    for p in paths:
        try:
            results.append(render(p, variants=variants, root=root))
        except RenderError as exc:
            failures.extend(exc.findings)
    warnings = [f for r in results for f in r.findings if f.severity == WARNING]
    if failures or (strict and warnings):
        raise RenderError(failures + warnings)
    _emit_findings(warnings)
    return results


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
@guarded
def render(path: Path, fmt: str, out: Path | None, all_clusters: bool, check_only: bool,
           variants: Path | None, root: Path | None, strict: bool) -> int:
    """Render the cluster at PATH (a cluster folder or its cluster.yaml)."""
    from renderer import output

    if check_only and out is None:
        raise click.UsageError("--check needs --out DIR")
    results = _render_all(_cluster_paths(path, all_clusters), variants, root, strict)
    if out is None:
        objects = [o for r in results for o in r.manifests]
        click.echo(output.to_json(objects) if fmt == "json" else output.to_yaml(objects), nl=False)
        return EXIT_OK
    files: dict[str, str] = {}
    for r in results:
        prefix = f"{r.overlay.name}/" if all_clusters else ""
        for name, content in output.directory_files(r.manifests).items():
            files[prefix + name] = content
    if check_only:
        stale = output.stale_files(out, files)
        for line in stale:
            click.echo(f"{line} (re-run cozy-render render --out)", err=True)
        return EXIT_FINDINGS if stale else EXIT_OK
    output.write_tree(out, files)
    return EXIT_OK


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "json", "github"]), default="text",
              show_default=True)
@click.option("--all", "all_clusters", is_flag=True, help="PATH is an overlay tree: check every cluster.")
@_variants_opt
@_root_opt
@_strict_opt
@guarded
def check(path: Path, fmt: str, all_clusters: bool, variants: Path | None, root: Path | None,
          strict: bool) -> int:
    """Render and run every rule; report findings (exit 1 on errors, or warnings with --strict)."""
    import json

    from renderer.pipeline import emit, sorted_findings
    from renderer.overlay import load_overlay
    from renderer.rules import run_rules
    from renderer.variants import Variants

    findings: list[Finding] = []
    for p in _cluster_paths(path, all_clusters):
        result = emit(load_overlay(p, root), Variants(variants))
        findings.extend(result.findings + run_rules(result))
    findings = sorted_findings(findings)
    if fmt == "json":
        click.echo(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=2))
    elif fmt == "github":
        _emit_findings(findings, "github")
    else:
        _emit_findings(findings)
    failing = [f for f in findings if f.severity == ERROR or strict]
    return EXIT_FINDINGS if failing else EXIT_OK


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
        raise RenderError([Finding("EXPLAIN", f"{key} is not set in the merged overlay", overlay.locate(()))])
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
    r = registry.get(rule_id.upper())
    if r is None:
        raise RenderError([Finding("RULES", f"no rule {rule_id}; `cozy-render rules` lists them")], EXIT_INPUT)
    click.echo(f"{r.id} ({r.severity}): {r.summary}\n\n{r.explanation}\n\nSources:")
    for s in r.sources:
        click.echo(f"  - {s}")
    return EXIT_OK


def _add_module_commands() -> None:
    import renderer.commands.cmp  # noqa: F401 - registers itself in ALL
    from renderer.commands import ALL

    for command in ALL:
        main.add_command(command)


_add_module_commands()

if __name__ == "__main__":  # pragma: no cover
    main()
