"""``check`` asks the chart: the real platform chart, rendered by a real helm, is the one source of
"what the platform renders" for the rules.

- ``platform_view(result, helm=..., chart=...)`` renders the chart once and returns a
  ``PlatformView`` (``renderer.resolve.platform``): helm's Packages (variant and ``spec.components``
  leaves), or, without helm, the chart model's. A chart failure is a ``PLT-CHART`` finding on the
  view carrying the chart's exact message, located at the overlay value that set the offending key
  (the key a ``fail`` message names, or the ``.Values`` path of a Go template error); then the
  model's Packages stand in.
- The check stage (``renderer.check.check``) passes that view to the rules
  (``run_rules(result, platform=view)``): PLT-11, PLT-12 and the PKG-* rules read it through
  ``RuleContext.platform``. Each rule has one body (``renderer.check.rules``); nothing here words a
  finding of theirs or removes one.
- ``chart_render(result, helm, chart)`` is the same render whole (every Package helm wrote), for
  ``effective``'s set; ``model_render(result)`` the model's prediction in the same shape.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from renderer.effective.helm import (
    ChartFailure,
    ChartRender,
    HelmFailure,
    find_helm,
    render_platform,
    render_platform_many,
)
from renderer.effective.packages import platform_inputs
from renderer.errors import ERROR, Finding, Location, fail
from renderer.model import PACKAGE_API
from renderer.platform_chart import chart_dir, version_known
from renderer.platform_chart.model import message_key, node_key
from renderer.resolve.platform import PlatformView, RenderedPackage, leaves

_VALUES = ("spec", "components", "platform", "values")
# The rules whose every finding depends on what the platform renders for a hand-written Package.
CO_MANAGEMENT_RULES = ("PLT-11", "PLT-12")
# isp-full-generic: values the chart takes from ConfigMap cozy-system/cozystack when it exists in the
# cluster (lookup); offline helm falls back to the platform values, so these are not compared.
FROM_LOOKUP = frozenset(("cozystack.networking", key) for key in
                        ("k8sServiceHost", "k8sServicePort", "POD_CIDR", "POD_GATEWAY", "SVC_CIDR", "JOIN_CIDR"))


def platform_view(result: Any, helm: str | None = None, chart: Path | None = None) -> PlatformView:
    """What the platform renders for ``result``: helm's rendering of the cluster's chart when a helm
    is found (``helm``, else PATH), else the model's (``result.plan.facts.view``)."""
    facts = result.plan.facts
    helm = helm or find_helm()
    if helm is None or (chart is None and any(f.code == "PLT-VERSION" for f in result.findings)):
        return facts.view  # no helm, or no chart of the written version (resolve reported PLT-VERSION)
    version = facts.version
    folder = chart_dir(version, chart)
    variant, values, platform = platform_inputs(result)
    rendered = _rendered(helm, folder, variant, values, render_platform)
    if rendered.failure is not None:
        failure = rendered.failure
        if any(problem.message in failure.message for problem in facts.chart_problems):
            found: tuple[Finding, ...] = ()  # a rule already quotes the chart's own message (report once)
        else:
            found = (Finding("PLT-CHART", f"{failure.message} (platform chart {version}, {failure.where})",
                             _locate(result, platform, _failure_key(failure.message)), ERROR),)
        return PlatformView("helm", version, facts.rendered_packages, frozenset(), found)
    modelled = facts.rendered_packages
    generic = facts.system_variant == "isp-full-generic"
    packages = {}
    for name, obj in rendered.packages().items():
        raw = obj.get("spec")
        spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
        known = modelled.get(name)
        packages[name] = RenderedPackage(name, str(spec.get("variant") or "default"),
                                         known.bundle if known else "", leaves(spec.get("components") or {}),
                                         known.gate if known else None)
    return PlatformView("helm", version, packages, FROM_LOOKUP if generic else frozenset())


def _failure_key(message: str) -> tuple[str, ...]:
    at = re.search(r"at <(.*?)>: ", message)
    return node_key(at.group(1)) if at else message_key(message)


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


# One `helm template` per distinct input in a process, and a fleet's inputs rendered many to a helm
# process ahead of its rules (``prefetch``): helm's output is a pure function of the binary, the chart
# and the values (offline, `lookup` finds nothing), so a memoised or batched render is the render
# (tests/effective/test_batch_helm.py checks both against one helm run per cluster). Only the Packages
# are kept (``platform_view`` and ``effective`` read nothing else); their documents are shared between
# renders of the same text (``render_platform_many(shared=True)``), so a fleet holds each one once.
MEMO_SIZE = 512
_memo: dict[tuple[str, str, str, str], Any] = {}


def _key(helm: str, folder: Path, variant: str, values: Any) -> tuple[str, str, str, str]:
    import json

    return (helm, str(folder), variant, json.dumps(values, sort_keys=True, default=str))


def _compact(rendered: Any) -> Any:
    if rendered.failure is not None:
        return rendered
    return ChartRender([doc for doc in rendered.documents if doc.get("kind") == "Package"], None)


def _remember(key: tuple[str, str, str, str], rendered: Any) -> None:
    if len(_memo) >= MEMO_SIZE:
        _memo.pop(next(iter(_memo)))
    _memo[key] = _compact(rendered)


def _rendered(helm: str, folder: Path, variant: str, values: Any, render: Any) -> Any:
    """The chart's render for these inputs (memoised); helm's own failure is PLT-HELM at the chart."""
    key = _key(helm, folder, variant, values)
    if key not in _memo:
        try:
            _remember(key, render(helm, folder, variant, values))
        except HelmFailure as exc:
            raise fail("PLT-HELM", exc.message, chart_location(folder)) from None
    return _memo[key]


def chart_location(chart: Path) -> Location:
    """Where helm's own failure is reported: the chart it was rendering (not the overlay)."""
    return Location(str(chart / "Chart.yaml"), 1, 1)


def chart_render(result: Any, helm: str, chart: Path) -> Any:
    """The whole render (``ChartRender``, Packages kept) of ``result``'s platform release from the
    chart folder ``chart``: the one ``platform_view`` used, when the check stage made it."""
    variant, values, _ = platform_inputs(result)
    return _rendered(helm, chart, variant, values, render_platform)


def model_render(result: Any) -> Any:
    """The model's prediction as a ``ChartRender``: one Package per name the chart emits, with the
    variant and the component values the model decides offline (values the chart takes from a
    ``lookup`` or computes from values the model does not replay are absent: a prediction). Every
    Package carries ``helm.sh/resource-policy: keep``, as both package helpers of the chart write it
    (templates/_helpers.tpl)."""
    facts = result.plan.facts
    problems = facts.chart_problems
    if problems:
        first = problems[0]
        return ChartRender([], ChartFailure(first.message, first.template, first.line, 0, first.message))
    documents = []
    for name, package in sorted(facts.rendered_packages.items()):
        components: dict[str, Any] = {}
        for path, value in sorted(package.values.items(), key=lambda item: [str(p) for p in item[0]]):
            node = components
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = value
        spec: dict[str, Any] = {"variant": package.variant}
        if components:
            spec["components"] = components
        documents.append({"apiVersion": PACKAGE_API, "kind": "Package",
                          "metadata": {"name": name, "annotations": {KEEP_POLICY: "keep"}}, "spec": spec})
    return ChartRender(documents, None)


KEEP_POLICY = "helm.sh/resource-policy"


def prefetch(helm: str, results: list[Any], parallel: int = 1, chart: Path | None = None) -> None:
    """Render the platform chart for every result not yet rendered, ``helm.BATCH`` clusters to a helm
    process (``render_platform_many``), so the check that follows finds each one ready. helm's own
    failure here is not reported: each cluster's check renders its own and reports it (PLT-HELM)."""
    wanted: dict[str, dict[tuple[str, str, str, str], tuple[str, Any]]] = {}
    for result in results[:MEMO_SIZE]:
        version = result.plan.facts.version
        if chart is None and not version_known(version):
            continue  # PLT-VERSION: no chart to render
        folder = chart_dir(version, chart)
        variant, values, _ = platform_inputs(result)
        key = _key(helm, folder, variant, values)
        if key not in _memo:
            wanted.setdefault(str(folder), {})[key] = (variant, values)
    for folder_name, inputs in wanted.items():
        try:
            renders = render_platform_many(helm, Path(folder_name), list(inputs.values()), parallel, shared=True)
        except HelmFailure:
            return
        for key, rendered in zip(list(inputs), renders, strict=True):
            _remember(key, rendered)
