"""Command bodies shared by the Click layer and the start-up fast path (``renderer.entry``).

This is the only module besides the CLI that writes to stdout/stderr or exits: ``execute`` turns
a body's result or exception into output and an exit code (table in ``renderer.errors``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TextIO

from renderer.errors import (
    ERROR,
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    WARNING,
    Finding,
    RenderError,
)


def report(findings: list[Finding], fmt: str = "text", stream: TextIO | None = None) -> None:
    """Findings as text lines (stderr) or GitHub workflow annotations (stdout)."""
    if fmt == "github":
        out = stream or sys.stdout
        for f in findings:
            loc = f.location
            level = "error" if f.severity == ERROR else "warning"
            where = f" file={loc.path},line={loc.line},col={loc.col}" if loc and loc.line else \
                (f" file={loc.path}" if loc else "")
            out.write(f"::{level}{where},title={f.code}::{f.message}\n")
        return
    out = stream or sys.stderr
    for f in findings:
        out.write(f.format() + "\n")


def execute(body: Callable[[], int | None], debug: bool = False,
            passthrough: tuple[type[BaseException], ...] = ()) -> NoReturn:
    __import__("renderer.output").output.configure_streams()  # UTF-8 stdout in any locale (issue 12)
    try:
        code = body()
        sys.stdout.flush()
    except RenderError as exc:
        report(exc.findings)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # The reader went away (`| head`); nothing useful can be said on a closed stdout.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except passthrough:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into an exit code
        if debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)\n")
        sys.exit(EXIT_INTERNAL)
    sys.exit(code or EXIT_OK)


def cluster_paths(path: Path, all_clusters: bool) -> list[Path]:
    if not all_clusters:
        return [path]
    clusters = path / "clusters" if (path / "clusters").is_dir() else path
    found = sorted(p.parent for p in clusters.glob("*/cluster.yaml"))
    if not found:
        raise RenderError([Finding("OVL-PATH", f"--all: no */cluster.yaml under {clusters}")])
    return found


def render_clusters(paths: list[Path], variants: Path | None, root: Path | None, strict: bool,
                    extra_vars: dict[str, str] | None = None, kubernetes_version: str | None = None,
                    validator: str = "auto") -> list:
    """Render every path; all failures are collected before raising. Warnings go to stderr."""
    results, warnings = _render_all(paths, variants, root, strict, extra_vars, kubernetes_version, validator)
    report(warnings)
    return results


def _render_all(paths: list[Path], variants: Path | None, root: Path | None, strict: bool,
                extra_vars: dict[str, str] | None, kubernetes_version: str | None,
                validator: str) -> tuple[list, list[Finding]]:
    from renderer.pipeline import render

    results, failures = [], []
    for p in paths:
        try:
            results.append(render(p, variants=variants, root=root, extra_vars=extra_vars,
                                  kubernetes_version=kubernetes_version, validator=validator))
        except RenderError as exc:
            failures.extend(exc.findings)
    warnings = [f for r in results for f in r.findings if f.severity == WARNING]
    if failures or (strict and warnings):
        raise RenderError(failures + warnings)
    return results, warnings


def _cached(target: Path, root: Path | None, command: list[str], produce: Callable[[], tuple[str, str, list[Path]]]) \
        -> int:
    """Write what ``produce`` renders, or replay it from the render cache (``renderer.cache``)."""
    folder = os.environ.get("COZY_RENDER_CACHE_DIR")  # renderer.cache.ENV; not imported unless set
    if not folder:
        stdout, stderr, _ = produce()
    else:
        from renderer import cache
        from renderer.overlay import find_cluster_file, find_root

        cluster_file = find_cluster_file(target)
        repo_root = (root or find_root(cluster_file)).resolve()
        entry_key = cache.key(repo_root, cluster_file, command)
        hit = cache.lookup(Path(folder), entry_key, repo_root)
        if hit is not None:
            stdout, stderr = hit
        else:
            stdout, stderr, inputs = produce()
            cache.store(Path(folder), entry_key, repo_root, inputs, stdout, stderr)
    sys.stderr.write(stderr)
    sys.stdout.write(stdout)
    return EXIT_OK


def _warnings_text(warnings: list[Finding]) -> str:
    return "".join(f.format() + "\n" for f in warnings)


def render_command(path: Path, fmt: str = "yaml", out: Path | None = None, all_clusters: bool = False,
                   check_only: bool = False, variants: Path | None = None, root: Path | None = None,
                   strict: bool = False, kubernetes_version: str | None = None, validator: str = "auto") -> int:
    if out is None and not all_clusters and variants is None:
        def produce() -> tuple[str, str, list[Path]]:
            from renderer import output

            (result,), warnings = _render_all([path], None, root, strict, None, kubernetes_version, validator)
            text = output.to_json(result.manifests) if fmt == "json" else output.to_yaml(result.manifests)
            return text, _warnings_text(warnings), result.inputs

        return _cached(path, root, ["render", fmt, str(strict), kubernetes_version or "", validator], produce)
    from renderer import output

    results = render_clusters(cluster_paths(path, all_clusters), variants, root, strict,
                              kubernetes_version=kubernetes_version, validator=validator)
    if out is None:
        objects = [o for r in results for o in r.manifests]
        sys.stdout.write(output.to_json(objects) if fmt == "json" else output.to_yaml(objects))
        return EXIT_OK
    files: dict[str, str] = {}
    for r in results:
        prefix = f"{r.overlay.name}/" if all_clusters else ""
        for name, content in output.directory_files(r.manifests).items():
            files[prefix + name] = content
    return output.write_out(out, files, results, all_clusters, check_only, fmt)  # guard, --check, write


def cmp_generate(path: Path) -> int:
    from renderer.cmp import repository_root

    raw = os.environ.get("ARGOCD_APP_PARAMETERS", "")
    root = repository_root(path, os.environ.get("ARGOCD_APP_SOURCE_PATH", ""))

    def produce() -> tuple[str, str, list[Path]]:
        from renderer.cmp import parse_parameters, render_for_argocd

        text, warnings, inputs = render_for_argocd(path, parse_parameters(raw), root)
        return text, _warnings_text(warnings), inputs

    return _cached(path, root, ["cmp", raw], produce)


def check_command(paths: list[Path], fmt: str = "text", variants: Path | None = None, root: Path | None = None,
                  strict: bool = False, kubernetes_version: str | None = None, validator: str = "auto") -> int:
    """Render without refusing, run the output schemas and every rule, report all findings."""
    import json

    from renderer.overlay import load_overlay
    from renderer.pipeline import emit, sorted_findings
    from renderer.rules import run_rules
    from renderer.schemas import check_objects
    from renderer.variants import Variants

    findings: list[Finding] = []
    for p in paths:
        result = emit(load_overlay(p, root), Variants(variants))
        findings.extend(result.findings)
        findings.extend(check_objects(result, kubernetes_version=kubernetes_version, validator=validator))
        findings.extend(run_rules(result))
    findings = sorted_findings(findings)
    if fmt == "json":
        sys.stdout.write(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=2) + "\n")
    else:
        report(findings, fmt)
    failing = [f for f in findings if f.severity == ERROR or strict]
    return EXIT_FINDINGS if failing else EXIT_OK
