"""``cozy-render check``: render without refusing, validate output schemas, run every rule, report."""

from __future__ import annotations

from renderer import report
from renderer.errors import ERROR, EXIT_FINDINGS, EXIT_OK, Finding
from renderer.requests import CheckRequest


def run(req: CheckRequest) -> int:
    from renderer.pipeline import check_cluster, cluster_paths, sorted_findings

    findings: list[Finding] = []
    for path in cluster_paths(req.path, req.all_clusters):
        findings.extend(check_cluster(path, variants=req.variants, root=req.root,
                                      kubernetes_version=req.kubernetes_version, validator=req.validator))
    findings = sorted_findings(findings)
    report.write(findings, req.fmt)
    failing = [f for f in findings if f.severity == ERROR or req.strict]
    return EXIT_FINDINGS if failing else EXIT_OK
