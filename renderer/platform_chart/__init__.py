"""The Cozystack platform chart, vendored per version, and what a real ``helm`` makes of it.

``charts/<version>/`` holds exact copies of ``packages/core/platform/`` from cozystack/cozystack
(Apache-2.0; ``charts/README.md`` names source and commit). ``platform.version`` in an overlay picks
one; ``--platform-chart DIR`` points at a user's own copy. This module only knows the versions and
folders: it is imported on the render path (version-aware rules), so it imports nothing heavy.
``renderer.platform_chart.model`` is the render-path model generated from each chart; the helm runs
(``effective``, the chart check) live in ``renderer.effective``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

CHARTS = Path(__file__).parent / "charts"
_RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def latest_release(names: list[str]) -> str | None:
    """The highest ``vX.Y.Z`` among ``names`` (snapshots such as ``main-3c780ac`` are not releases)."""
    releases = [(tuple(int(g) for g in found.groups()), name) for name in names if (found := _RELEASE.match(name))]
    return max(releases)[1] if releases else None


def _vendored() -> list[str]:
    return sorted(p.name for p in CHARTS.iterdir() if (p / "Chart.yaml").is_file()) if CHARTS.is_dir() else []


# The latest vendored release (v1.6.2 today): what `cozy-render init` writes and what a cluster that
# does not say `platform.version` is judged by. Users run releases (the operator installs the
# platform chart of the cozystack release it ships); a `main-*` snapshot is opt-in. Vendoring the
# next release (python -m renderer.platform_chart.vendor) makes it the default. Every
# version-dependent rule and feature reads the cluster's version (PlatformFacts.version).
DEFAULT_VERSION = latest_release(_vendored()) or "v1.6.2"

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


def unknown_version_message(version: object) -> str:
    """PLT-VERSION's text: the version written and the vendored ones (one line)."""
    return (f"platform.version {version} names no vendored platform chart (shipped: "
            f"{', '.join(shipped_versions())}; default {DEFAULT_VERSION}); write one of them, or give "
            "`effective` a copy of the chart with --platform-chart DIR")

