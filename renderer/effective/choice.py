"""Who says what the platform chart renders: the real chart through helm, or the built-in model.

``--chart model`` (the default) never runs helm: the model of the vendored chart is proven equal to
helm by the differential tests CI runs (tests/platform_chart/). ``--chart helm`` renders the real
chart for every cluster and fails clearly (PLT-HELM) without a helm that answers ``helm version``.
``--chart auto`` takes helm when ``--helm`` or PATH provides one, else the model. Every checking
command names the choice (``ChartChoice.describe``), so an answer never silently depends on $PATH.
"""

from __future__ import annotations

from typing import NamedTuple

from renderer.effective.helm import (
    _GO_CRASH,
    DATA_BYTES,
    HELM_HINT,
    Bounds,
    HelmFailure,
    find_helm,
    helm_failure,
    run_bounded,
)
from renderer.errors import fail

MODES = ("model", "helm", "auto")
DEFAULT_MODE = "model"


class ChartChoice(NamedTuple):
    mode: str  # model | helm (auto is resolved to one of them)
    helm: str | None = None  # the helm binary, with mode helm
    helm_version: str = ""  # what `helm version --short` said
    asked: str = DEFAULT_MODE  # what the user asked for (model, helm or auto)

    def describe(self) -> str:
        if self.mode == "helm":
            return f"platform chart: helm {self.helm_version} ({self.helm})"
        why = "no helm on PATH" if self.asked == "auto" else "--chart helm renders the real chart"
        return f"platform chart: built-in model ({why})"

    def judge(self) -> str:
        """The judge in a few words, without the binary's path (for outputs that are compared)."""
        if self.mode == "helm":
            return f"rendered by helm {self.helm_version}"
        return "predicted by the built-in model; --chart helm renders the real chart"

    def as_dict(self) -> dict[str, object]:
        return {"mode": self.mode, "asked": self.asked, "helm": self.helm, "helmVersion": self.helm_version or None}


MODEL = ChartChoice("model")


def choose(mode: str | None = None, helm: str | None = None) -> ChartChoice:
    """Resolve ``--chart`` and ``--helm``: a helm mode carries a binary that answered ``helm version``.
    ``--chart`` unsaid is the default (the model), unless ``--helm`` names a binary: then it is helm."""
    if mode is None:
        mode = "helm" if helm is not None else DEFAULT_MODE
    if mode not in MODES:
        raise fail("PLT-HELM", f"--chart {mode!r}: choose one of {', '.join(MODES)}")
    if mode == "model":  # said explicitly: --helm is not run (check --chart model never runs helm)
        return MODEL

    binary = find_helm(helm)
    if binary is None:
        if mode == "auto" and helm is None:
            return ChartChoice("model", asked="auto")

        what = f"--helm {helm} is not an executable" if helm is not None else "--chart helm: no helm on PATH"
        raise fail("PLT-HELM", f"{what}: {HELM_HINT}")
    return ChartChoice("helm", binary, _version(binary), mode)


def _version(binary: str) -> str:
    return helm_version(binary)


def helm_version(binary: str) -> str:
    """``helm version --short`` (v3.17.2+gcc0...), run under helm's bounds (``renderer.effective.helm``);
    anything else means the binary is not a usable helm, which is PLT-HELM, never a chart failure blamed
    on the overlay."""
    import tempfile
    from pathlib import Path

    limits = Bounds(3, 20, DATA_BYTES, 2**20)
    with tempfile.TemporaryDirectory(prefix="cozy-render-helm-") as home:
        try:
            done = run_bounded([binary, "version", "--short"], Path(home), limits, answer_only=False)
        except HelmFailure as exc:
            raise fail("PLT-HELM", f"--helm {binary} cannot run as helm: {exc.message}") from None
    said = done.stdout.strip()
    if done.returncode != 0 and _GO_CRASH.search(done.stderr):  # a Go program that died: helm, or not
        raise fail("PLT-HELM", f"{binary} cannot run: {helm_failure(binary, done.returncode, done.stderr, limits)}")
    if done.returncode != 0 or (not said.startswith("v3.") and not said.startswith("v4.")):
        first = (said or done.stderr.strip()).splitlines()[:1]
        raise fail("PLT-HELM", f"{binary} is not helm 3 or 4 (`helm version --short` said "
                               f"{first[0][:80] if first else 'nothing'!r}, exit {done.returncode})")
    return said.split("+", 1)[0]
