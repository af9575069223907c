"""What many tests share: rendering up to (not including) the checks, and overlay repositories.

Overlay repositories are built by the ``repo`` and ``cluster`` fixtures in tests/conftest.py (one
builder); paths to the bundled samples are ``REPO`` and ``OVERLAYS``.
"""

from __future__ import annotations

from pathlib import Path

from renderer.model import RenderResult


def emitted(path: Path, root: Path | None = None, variants: Path | None = None) -> RenderResult:
    """load -> merge -> resolve -> emit for the cluster at ``path``: no schema checks, no rules."""
    from renderer.overlay import load_overlay
    from renderer.pipeline import emit
    from renderer.variants import Variants

    return emit(load_overlay(path, root), Variants(variants))
