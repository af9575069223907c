"""The Cozystack platform chart, vendored per version, and what a real ``helm`` makes of it.

``charts/<version>/`` holds exact copies of ``packages/core/platform/`` from cozystack/cozystack
(Apache-2.0; ``charts/README.md`` names source and commit). ``platform.version`` in an overlay picks
one; ``--platform-chart DIR`` points at a user's own copy. This module only knows the versions and
folders: it is imported on the render path (version-aware rules), so it imports nothing heavy.
``renderer.platform_chart.model`` is the render-path model generated from each chart; the helm runs
(``effective``, the chart check) live in ``renderer.effective``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

CHARTS = Path(__file__).parent / "charts"
# What the domain reference, the rules and the features (Hubble own mode rebuilds cozystack.networking
# as this chart renders it) were written and verified against. Clusters on the latest release say
# `platform.version: v1.6.2`; making that the default needs the features to become version-aware.
DEFAULT_VERSION = "main-3c780ac"
SHIPPED_VERSIONS = ("v1.6.2", "main-3c780ac")

@lru_cache(maxsize=1)
def _shipped() -> tuple[str, ...]:
    return tuple(sorted(p.name for p in CHARTS.iterdir() if (p / "Chart.yaml").is_file()))


def shipped_versions() -> list[str]:
    """Vendored chart versions, as folder names under ``charts/``."""
    return list(_shipped())


def chart_dir(version: str | None, override: Path | None = None) -> Path:
    """The chart folder for ``version`` (default ``DEFAULT_VERSION``), or ``override`` when given."""
    if override is not None:
        return override
    return CHARTS / (version or DEFAULT_VERSION)


def version_known(version: str | None) -> bool:
    return (version or DEFAULT_VERSION) in shipped_versions()

