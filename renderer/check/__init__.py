"""Stage 4, check: the one function that judges a render (``check``), whoever asked for it.

It adds, onto ``result.findings`` (sorted): the output schemas (``renderer.check.schemas``,
kubeconform-compatible, offline), the platform chart's own verdict when the real chart judges
(``--chart helm``: the driver renders it and passes the ``PlatformView``), the reference rules
(``renderer.check.rules``) against what the platform renders, and the Flux delivery checks
(``check``'s FLUX-SUBST, ``renderer.check.flux``). ``renderer.pipeline`` calls it for every cluster
of every command.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

from typing import Any

from renderer.emit import RenderResult
from renderer.resolve.platform import PlatformView


def check(result: RenderResult, options: Any, platform: PlatformView | None = None) -> None:
    """Judge ``result`` as ``options`` ask (``renderer.pipeline.Options``: the driver's, so not imported
    here); findings go onto ``result.findings``, sorted. ``platform``: what the real chart renders for
    it (``--chart helm``); None: the built-in model's view."""
    from renderer.check.rules import run_rules
    from renderer.check.schemas import check_objects
    from renderer.errors import sorted_findings

    result.findings.extend(check_objects(result, kubernetes_version=options.kubernetes_version,
                                         validator=options.validator))
    if options.platform_chart is not None:
        # --platform-chart DIR answers a platform.version cozy-render does not ship: not refused for it
        result.findings[:] = [f for f in result.findings if f.code != "PLT-VERSION"]
    if platform is not None:  # the real chart is the one answer to "what does the platform render"
        result.findings.extend(platform.findings)
    result.findings.extend(run_rules(result, platform=platform))
    if options.flux:
        from renderer.check import flux

        result.findings.extend(flux.check(result))
    result.findings[:] = sorted_findings(result.findings)
