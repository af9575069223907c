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



def scalar_corpus(words: list[str], count: int = 20_000) -> list[str]:
    """Plain scalars to compare two ways of resolving them: ``words`` with changed case, a sign, a dot or
    a newline around them, numbers and timestamps in YAML 1.1 and 1.2 spellings, and random text drawn
    from the characters those are made of (fixed seed)."""
    import random

    rng = random.Random(24)
    numbers = ["0", "-0", "+1", "0b101", "0o17", "017", "0x1F", "1_000", "1.5", "-.5", ".5e3", "1e3", "1E+3",
               "1:30", "190:20:30.15", ".inf", "-.Inf", ".NaN", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
               "2001-12-14 21:59:43.10 -5", "1.6.2", "10.244.0.1", "15s", "7445", "-c", "1__", "0x", "+", "-", "."]
    corpus = ["", " ", "\n", "node", "nodeSelector", "Exists", "busybox:1.37", *numbers]
    for word in [*words, *numbers]:
        corpus += [word, word.upper(), word.lower(), word.title(), word + "\n", word + " ", " " + word,
                   "+" + word, "-" + word, "." + word, word + "x", "x" + word, word * 2]
    alphabet = "0123456789_.:+-eEbBoOxXaAfFiInNtTrRuUlLsSyY<=~!&* \t\nZz"
    corpus += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(count)]
    return corpus


def render(path: Path, *, variants: Path | None = None, root: Path | None = None,
           extra_vars: dict[str, str] | None = None, kubernetes_version: str | None = None,
           validator: str = "auto", refuse: bool = True) -> RenderResult:
    """One cluster through every stage, as ``render`` runs it (``pipeline.run(...).one()``): refused
    (RenderError) when ``refuse`` and an error remains, else the result with its findings."""
    from renderer.pipeline import Options, run

    return run(path, Options(variants, root, extra_vars, kubernetes_version, validator, refuse=refuse)).one()
