"""``cozy-render ls OVERLAYS``: one row per cluster of an overlay tree, with the rule counts.

Each cluster is rendered and checked (one ``pipeline.run`` over the tree, not refused); a cluster whose overlay is
refused before it renders still gets a row, with its error count and ``?`` for what it would render.
A table, as kubectl prints one, unless ``-o json``; the VERSION is the platform chart version the
cluster is judged by (its ``platform.version``, else the default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from renderer import report, shard
from renderer import shard_report as sharded
from renderer.commands import fleet
from renderer.errors import ERROR, EXIT_FINDINGS, EXIT_OK, WARNING
from renderer.escape import MAX_VALUE_CHARS, json_text, printable
from renderer.pipeline import ClusterRun, Options, jobs_for
from renderer.requests import LsRequest

if TYPE_CHECKING:
    from renderer.emit import RenderResult

COLUMNS = ("name", "os", "platform", "version", "gpu", "hubble", "vlans", "errors", "warnings")
_NUMERIC = ("vlans", "errors", "warnings")


# ls's names for the plan's GPU route (Plan.gpu_route): the bundle routes show which bundle variant.
_ROUTE_SHOWN = {"passthrough": "bundle:default", "vgpu": "bundle:vgpu"}


def row(cluster: ClusterRun) -> dict[str, Any]:
    """One cluster's row; a cluster refused before it rendered shows ``?`` for what it would render."""
    errors = sum(f.severity == ERROR for f in cluster.findings)
    warnings = sum(f.severity == WARNING for f in cluster.findings)
    if cluster.kept is None:
        return {"name": cluster.name, "os": "?", "platform": "?", "version": "?", "gpu": "?", "hubble": "?",
                "vlans": 0, "errors": errors, "warnings": warnings}
    return {**cluster.kept, "errors": errors, "warnings": warnings}


def described(result: RenderResult) -> dict[str, Any]:
    """What a row shows of a render (computed where it rendered: a worker sends back only this)."""
    overlay = result.overlay
    hubble = (overlay.get("hubble", "ownership") or "patch") if overlay.get("hubble", "enabled") is True else "off"
    route = result.plan.gpu_route
    return {"name": overlay.name, "os": overlay.get("host", "os"), "platform": result.plan.platform_variant,
            # what the cluster asks for (an unknown one is its PLT-VERSION error), else the default it runs
            "version": overlay.get("platform", "version") or result.plan.facts.version,
            "gpu": _ROUTE_SHOWN.get(route, route), "hubble": hubble, "vlans": len(overlay.get("vlans") or [])}


def table(rows: list[dict[str, Any]]) -> str:
    shown = [{c: printable(r[c], MAX_VALUE_CHARS) for c in COLUMNS} for r in rows]  # a folder name is input
    widths = {c: max([len(c)] + [len(r[c]) for r in shown]) for c in COLUMNS}
    def line(values: dict[str, Any]) -> str:
        cells = [str(values[c]).rjust(widths[c]) if c in _NUMERIC else str(values[c]).ljust(widths[c])
                 for c in COLUMNS]
        return "  ".join(cells).rstrip() + "\n"
    return line({c: c.upper() for c in COLUMNS}) + "".join(line(r) for r in shown)


def run(req: LsRequest) -> int:
    part = shard.requested(req.shard, True)
    options = Options(req.variants, req.root, refuse=False, jobs=jobs_for(req.jobs), shard=part)
    done, _ = fleet.run_watched(req.path, options, all_clusters=True, watched=fleet.watching(), label="listing",
                                keep=described)
    rows = shown([row(c) for c in done.clusters], req.sort, req.errors_only)
    if part is not None and req.fmt == "json":  # what `merge` needs to join the shards
        sharded.show_json("clusters", rows, sharded.section(part, "ls", req, [(c.path, c.name) for c in done.clusters]))
    else:
        report.show("clusters", req.fmt, rows)
    return EXIT_FINDINGS if req.errors_only and rows else EXIT_OK


def shown(rows: list[dict[str, Any]], sort: str, errors_only: bool) -> list[dict[str, Any]]:
    """The rows in ``--sort`` order (then by name), only those with errors with ``--errors``."""
    numeric = sort in _NUMERIC
    rows = sorted(rows, key=lambda r: (-r[sort] if numeric else str(r[sort]), r["name"]))
    return [r for r in rows if r["errors"]] if errors_only else rows


@report.reporter("clusters", "json")
def _json(rows: list[dict[str, Any]], streams: report.Streams) -> None:
    streams.stdout.write(json_text({"apiVersion": report.JSON_API_VERSION, "kind": "Clusters", "clusters": rows},
                                   indent=2) + "\n")


@report.reporter("clusters", "table")
def _table(rows: list[dict[str, Any]], streams: report.Streams) -> None:
    streams.stdout.write(table(rows))
