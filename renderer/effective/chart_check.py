"""``check`` asks the chart: the real platform chart, rendered by a real helm, judges the render.

``chart_findings(result)`` (one call from the check command):

- any chart failure becomes a ``PLT-CHART`` error carrying the chart's exact message, located at
  the overlay value that set the offending key (the key a ``fail`` message names, or the
  ``.Values`` path of a Go template error) where one is found;
- PLT-11 and PLT-12 are decided against what the chart actually renders for each Package (variant
  and ``spec.components`` values included): the Python model's PLT-11/PLT-12 findings in
  ``result.findings`` are replaced by the chart's.

Without helm (none on PATH), nothing is asked and nothing is replaced: the Python rules stand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from renderer.errors import ERROR, WARNING, Finding, Location

_VALUES = ("spec", "components", "platform", "values")


def chart_findings(result: Any, helm: str | None = None, chart: Path | None = None) -> list[Finding]:
    from renderer.effective.helm import find_helm, render_platform
    from renderer.effective.packages import platform_inputs
    from renderer.platform_chart import DEFAULT_VERSION, chart_dir, version_known

    helm = helm or find_helm()
    version = result.overlay.get("platform", "version") or DEFAULT_VERSION
    if helm is None or (chart is None and not version_known(version)):
        return []
    chart = chart_dir(version, chart)
    variant, values, platform = platform_inputs(result)
    rendered = render_platform(helm, chart, variant, values)
    if rendered.failure is not None:
        failure = rendered.failure
        if any(f.severity == ERROR and failure.message in f.message for f in result.findings):
            return []  # the Python model already reported the chart's own message (report once)
        key = _failure_key(failure.message)
        return [Finding("PLT-CHART", f"{failure.message} (platform chart {version}, {failure.where})",
                        _locate(result, platform, key), ERROR)]
    findings = _co_management(result, rendered.packages())
    result.findings[:] = [f for f in result.findings if f.code not in ("PLT-11", "PLT-12")]
    return findings


def _failure_key(message: str) -> tuple[str, ...]:
    from renderer.platform_chart.model import _message_key, _node_key

    at = re.search(r"at <(.*?)>: ", message)
    return _node_key(at.group(1)) if at else _message_key(message)


def _locate(result: Any, platform: Any, key: tuple[str, ...]) -> Location | None:
    """The overlay line that set the longest prefix of ``key`` in the platform values, else the
    platform Package's own source (its variant decides the values file)."""
    if platform is None:
        return None
    values = ((platform.obj.get("spec") or {}).get("components") or {}).get("platform", {}).get("values")
    path: tuple[str, ...] = ()
    node: Any = values
    for part in key:
        if not isinstance(node, dict) or part not in node:
            break
        node = node[part]
        path += (part,)
    if path:
        return platform.locate(_VALUES + path, result.overlay)
    return platform.locate(("spec", "variant"), result.overlay)


def _co_management(result: Any, chart_packages: dict[str, dict[str, Any]]) -> list[Finding]:
    """PLT-11 / PLT-12 against the chart's own Packages (same messages as the Python rules)."""
    from renderer.check.rules import RuleContext
    from renderer.check.rules.common import as_json, dotted, hand_written, spec_of, written_variant
    from renderer.check.rules.platform import _MISSING, _same, _walk
    from renderer.resolve.platform import leaves

    ctx = RuleContext(result)
    generic = _system_variant(result) == "isp-full-generic"
    findings = []
    for e in hand_written(ctx):
        theirs = chart_packages.get(e.name)
        if theirs is None:
            continue
        their_spec = theirs.get("spec") or {}
        their_variant = str(their_spec.get("variant") or "default")
        variant = written_variant(e)
        if variant is not None and variant != their_variant:
            findings.append(Finding("PLT-12", f"Variant {variant} conflicts with the platform-rendered variant "
                                    f"{their_variant} for {e.name}.", e.locate(("spec", "variant"), result.overlay)))
        components = spec_of(e).get("components")
        conflicts = 0
        for path, platform_value in sorted(leaves(their_spec.get("components") or {}).items()):
            ours = _walk(components, path)
            if ours is _MISSING or _same(ours, platform_value) or (generic and (e.name, path[-1]) in _FROM_LOOKUP):
                continue
            conflicts += 1
            key = dotted(("spec", "components") + path)
            findings.append(Finding(
                "PLT-11", f"{e.name} is rendered by the platform release with {key}={as_json(platform_value)}; keep "
                "the platform's value or opt the Package out (bundles.disabledPackages) before managing it alone.",
                e.locate(("spec", "components") + path, result.overlay), ERROR))
        if conflicts or (variant is not None and variant != their_variant):
            continue
        findings.append(Finding("PLT-11", f"{e.name} is co-managed with the platform release; platform-rendered "
                                "keys will be re-asserted on every platform upgrade.", e.locate((), result.overlay),
                                WARNING))
    return findings


# isp-full-generic: values the chart takes from ConfigMap cozy-system/cozystack when it exists in the
# cluster (lookup); offline it falls back to the platform values, so these are not compared.
_FROM_LOOKUP = {("cozystack.networking", key) for key in
                ("k8sServiceHost", "k8sServicePort", "POD_CIDR", "POD_GATEWAY", "SVC_CIDR", "JOIN_CIDR")}


def _system_variant(result: Any) -> str:
    from renderer.effective.packages import platform_inputs

    variant, values, _ = platform_inputs(result)
    from renderer.platform_chart.model import chart_model

    version = result.overlay.get("platform", "version")
    effective = chart_model(version).effective_values(variant, values)
    system = (effective.get("bundles") or {}).get("system") if isinstance(effective.get("bundles"), dict) else None
    return str(system.get("variant")) if isinstance(system, dict) else ""
