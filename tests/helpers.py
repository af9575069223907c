"""What many tests share: rendering up to (not including) the checks, and overlay repositories.

Overlay repositories are built by the ``repo`` and ``cluster`` fixtures in tests/conftest.py (one
builder); paths to the bundled samples are ``REPO`` and ``OVERLAYS``.
"""

from __future__ import annotations

from pathlib import Path

from renderer.emit import RenderResult, emit
from renderer.load.overlay import Overlay, load_overlay
from renderer.load.variants import Variants
from renderer.resolve import resolve


def emitted(path: Path, root: Path | None = None, variants: Path | None = None) -> RenderResult:
    """load -> merge -> resolve -> emit for the cluster at ``path``: no schema checks, no rules."""
    return emit_overlay(load_overlay(path, root), variants)


def emit_overlay(overlay: Overlay, variants: Path | None = None) -> RenderResult:
    """resolve -> emit for an overlay already loaded."""
    return emit(resolve(overlay, Variants(variants)))
