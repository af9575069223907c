"""``cozy-render check``: render without refusing, validate output schemas, run every rule, report."""

from __future__ import annotations

from renderer import batch, report
from renderer.errors import ERROR, EXIT_FINDINGS, EXIT_OK, Finding
from renderer.requests import CheckRequest


def run(req: CheckRequest) -> int:
    from renderer.commands import fleet
    from renderer.effective.chart_check import platform_view
    from renderer.output import flux
    from renderer.pipeline import cluster_paths, render, sorted_findings

    paths = cluster_paths(req.path, req.all_clusters)
    if req.all_clusters and fleet.watching():
        watched = fleet.check_watched(paths, fmt=req.fmt, verbose=req.verbose, variants=req.variants,
                                       root=req.root, kubernetes_version=req.kubernetes_version,
                                       validator=req.validator)
        return EXIT_FINDINGS if [f for f in watched if f.severity == ERROR or req.strict] else EXIT_OK
    findings: list[Finding] = []
    for path in batch.clusters(paths):  # the collector paused between clusters (renderer.batch)
        # The rules read what the real platform chart renders when helm is available (else the model).
        result = render(path, refuse=False, variants=req.variants, root=req.root,
                        kubernetes_version=req.kubernetes_version, validator=req.validator,
                        platform_view=platform_view)
        findings.extend(result.findings + flux.check(result))
    findings = sorted_findings(findings)
    report.write(findings, req.fmt)
    failing = [f for f in findings if f.severity == ERROR or req.strict]
    return EXIT_FINDINGS if failing else EXIT_OK
