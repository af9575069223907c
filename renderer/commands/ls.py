"""``cozy-render ls OVERLAYS``: one row per cluster of an overlay tree, with the rule counts.

Each cluster is rendered and checked (``pipeline.render(refuse=False)``); a cluster whose overlay is
refused before it renders still gets a row, with its error count and ``?`` for what it would render.
A table on a terminal, JSON otherwise (``-o`` chooses).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from renderer.errors import ERROR, EXIT_FINDINGS, EXIT_OK, WARNING, RenderError
from renderer.platform_chart import DEFAULT_VERSION
from renderer.requests import LsRequest

COLUMNS = ("name", "os", "platform", "version", "gpu", "hubble", "vlans", "errors", "warnings")
_NUMERIC = ("vlans", "errors", "warnings")


def gpu_route(overlay: Any) -> str:
    variant = overlay.get("gpu", "variant") or "none"
    if variant in ("default", "vgpu"):
        return f"bundle:{variant}"
    if variant == "container":
        return "talos-native" if overlay.get("host", "os") == "talos" else "container"
    return "none"


def row(path: Path, req: LsRequest, version: str) -> dict[str, Any]:
    from renderer.pipeline import render

    try:
        result = render(path, variants=req.variants, root=req.root, refuse=False)
    except RenderError as exc:
        return {"name": path.name, "os": "?", "platform": "?", "version": version, "gpu": "?", "hubble": "?",
                "vlans": 0, "errors": sum(f.severity == ERROR for f in exc.findings),
                "warnings": sum(f.severity == WARNING for f in exc.findings)}
    overlay = result.overlay
    hubble = (overlay.get("hubble", "ownership") or "patch") if overlay.get("hubble", "enabled") is True else "off"
    return {"name": overlay.name, "os": overlay.get("host", "os"), "platform": result.plan.platform_variant,
            "version": overlay.get("platform", "version") or result.plan.facts.version or version,
            "gpu": gpu_route(overlay), "hubble": hubble,
            "vlans": len(overlay.get("vlans") or []),
            "errors": sum(f.severity == ERROR for f in result.findings),
            "warnings": sum(f.severity == WARNING for f in result.findings)}


def table(rows: list[dict[str, Any]]) -> str:
    widths = {c: max([len(c)] + [len(str(r[c])) for r in rows]) for c in COLUMNS}
    def line(values: dict[str, Any]) -> str:
        cells = [str(values[c]).rjust(widths[c]) if c in _NUMERIC else str(values[c]).ljust(widths[c])
                 for c in COLUMNS]
        return "  ".join(cells).rstrip() + "\n"
    return line({c: c.upper() for c in COLUMNS}) + "".join(line(r) for r in rows)


def run(req: LsRequest) -> int:
    from renderer.commands import fleet
    from renderer.pipeline import cluster_paths

    version = DEFAULT_VERSION  # what a cluster that does not pin platform.version runs
    paths = cluster_paths(req.path, True)
    if fleet.watching():
        import click

        with click.progressbar(paths, label="listing", file=sys.stderr, show_pos=True) as bar:
            rows = [row(p, req, version) for p in bar]
    else:
        rows = [row(p, req, version) for p in paths]
    numeric = req.sort in _NUMERIC
    rows.sort(key=lambda r: (-r[req.sort] if numeric else str(r[req.sort]), r["name"]))
    if req.errors_only:
        rows = [r for r in rows if r["errors"]]
    fmt = req.fmt or ("table" if sys.stdout.isatty() else "json")
    if fmt == "json":
        sys.stdout.write(json.dumps({"clusters": rows}, indent=2) + "\n")
    else:
        sys.stdout.write(table(rows))
    return EXIT_FINDINGS if req.errors_only and rows else EXIT_OK
