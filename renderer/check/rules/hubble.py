"""HUB-*: Hubble rules (reference section (g), "Hubble").

The rules read the rendered ``cozystack.networking`` objects, whichever way they were written (the
hubble feature in patch or own mode, or a hand-written ``packages:`` entry), so the same facts hold
for all of them. Which of those objects exist, and how they must be ordered against the platform
release, is explained in ``renderer.resolve.features.hubble`` (PLT-11 is the platform rules' rule).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from renderer.check.rules import Hit, RuleContext, rule
from renderer.errors import ERROR, WARNING
from renderer.model import OWNERSHIP_ANNOTATION, PLATFORM_PACKAGE, Emitted
from renderer.resolve.features.hubble import HUBBLE_PATH, NETWORKING
from renderer.resolve.platform import NETWORKING_VARIANT
from renderer.tree import dig

_C = "C:"  # cozystack/cozystack @ 3c780acd417f086f8f18d040d0d7020ff55d3ba3
_W = "W:"  # cozystack/website @ aa0d9e1be37f3ab18e663c092f39c09e444c739f, content/en/docs/next/
SRC_SYSTEM = f"{_C}packages/core/platform/templates/bundles/system.yaml"
SRC_NETWORKING_SOURCE = f"{_C}packages/core/platform/sources/networking.yaml"
SRC_HUBBLE_DOC = f"{_W}networking/hubble.md ({_C}docs/hubble-observability.md)"
SRC_CILIUM_VALUES = "cilium chart 1.19.5 values.yaml (hubble.metrics.serviceMonitor.enabled: false), vendored " \
                    f"in {_C}packages/system/cilium"
# Labels the L7 HTTP dashboard groups by (reference (e)); an httpV2 entry without them leaves it empty.
DASHBOARD_LABELS = ("source_workload", "destination_workload")


def _hubble_on(ctx: RuleContext) -> list[tuple[Emitted, dict[str, Any]]]:
    """Every rendered cozystack.networking that switches Hubble on, with its hubble values."""
    out = []
    for e in ctx.packages():
        if e.name == NETWORKING:
            hubble = dig(e.obj, *HUBBLE_PATH)
            if isinstance(hubble, dict) and hubble.get("enabled") is True:
                out.append((e, hubble))
    return out


def _is_patch(e: Emitted) -> bool:
    return ((e.obj.get("metadata") or {}).get("annotations") or {}).get(OWNERSHIP_ANNOTATION) == "patch"


@rule(
    "HUB-01", ERROR,
    "cilium/hubble values under the platform Package values are ignored",
    """
    templates/bundles/system.yaml builds the cilium values of cozystack.networking from a fixed set
    of keys (k8sServiceHost/Port, cgroup.autoMount, gatewayAPI.enableAlpn); there is no passthrough,
    so a cilium: or hubble: block in cozystack.cozystack-platform spec.components.platform.values
    reaches nothing and Hubble silently stays off. Use the overlay's hubble: key, which writes
    Package cozystack.networking spec.components.cilium.values.cilium.hubble.
    """,
    [SRC_SYSTEM, SRC_HUBBLE_DOC],
)
def hub_01(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.packages():
        if not e.is_package(PLATFORM_PACKAGE):
            continue
        values = dig(e.obj, "spec", "components", "platform", "values")
        if not isinstance(values, dict):
            continue
        for parent in ((), ("networking",)):
            node = dig(values, *parent)
            if not isinstance(node, dict):
                continue
            for key in ("cilium", "hubble"):
                if key in node:
                    yield Hit("Platform values do not reach Cilium; put Hubble under Package cozystack.networking "
                              "spec.components.cilium.values.cilium.hubble (the overlay's hubble: key does that).",
                              e, ("spec", "components", "platform", "values") + parent + (key,))


@rule(
    "HUB-02", ERROR,
    "Hubble needs the Cozystack-managed Cilium",
    """
    Hubble is part of the cilium component of Package cozystack.networking. The platform renders that
    Package with a Cilium-bearing variant only on isp-full (kubeovn-cilium) and isp-full-generic
    (kubeovn-cilium-generic); isp-hosted renders the noop variant (no Cilium), the default variant
    renders no bundles, and a name in bundles.disabledPackages is not rendered at all. A patch-mode
    Hubble object needs the platform's object to patch (otherwise it would create a variant-less
    Package). With ownership: own cozy-render renders the whole object, which needs an isp-full*
    platform to know what to render. A hand-written cozystack.networking (packages:) must select a
    variant with the cilium component.
    """,
    [SRC_NETWORKING_SOURCE, SRC_SYSTEM, SRC_HUBBLE_DOC],
)
def hub_02(ctx: RuleContext) -> Iterator[Hit]:
    facts = ctx.facts
    cilium_variants = ctx.data("hubble/networking.yaml")["ciliumVariants"]
    message = "Hubble needs the Cozystack-managed Cilium (networking variant with a cilium component)"
    rendered = _hubble_on(ctx)
    for e, _ in rendered:
        if _is_patch(e):
            variant = facts.networking_variant
            if variant is None:
                yield Hit(f"{message}: platform variant {facts.variant} does not render {NETWORKING} "
                          "(no system bundle, or it is in bundles.disabledPackages), so there is nothing to "
                          "patch; use hubble.ownership: own on isp-full/isp-full-generic.", e, HUBBLE_PATH)
                continue
        else:
            variant = (e.obj.get("spec") or {}).get("variant") or "default"
        if variant not in cilium_variants:
            yield Hit(f"{message}: {NETWORKING} variant {variant} has none.", e, ("spec", "variant"))
    if ctx.overlay.get("hubble", "enabled") is True and not rendered:
        system_variant = facts.system_variant
        if not facts.system_enabled:
            reason = f"platform variant {facts.variant} renders no system bundle, hence no {NETWORKING}"
        elif facts.is_disabled(NETWORKING):
            reason = f"{NETWORKING} is in bundles.disabledPackages, so there is nothing to patch " \
                     "(hubble.ownership: own renders the whole object instead)"
        else:
            variant = NETWORKING_VARIANT.get(system_variant)
            reason = f"bundles.system.variant {system_variant} renders " + \
                (f"{NETWORKING} variant {variant}" if variant else f"no {NETWORKING}")
        yield Hit(f"{message}: {reason}.", overlay_path=("hubble", "enabled"))


@rule(
    "HUB-03", WARNING,
    "Hubble dashboards need the metrics list, with httpV2 labelsContext",
    """
    Without hubble.metrics.enabled Hubble exports no metrics at all, and the Grafana folder hubble
    stays empty. The L7 HTTP dashboard groups by source and destination workload, so the httpV2
    entry must keep labelsContext=...source_workload...destination_workload... as in the
    recommended list (cozy-render renders it unless hubble.metrics or hubble.values replace it).
    """,
    [SRC_HUBBLE_DOC, f"{_C}packages/system/monitoring/dashboards-infra.list"],
)
def hub_03(ctx: RuleContext) -> Iterator[Hit]:
    for e, hubble in _hubble_on(ctx):
        enabled = dig(hubble, "metrics", "enabled")
        if not enabled:
            yield Hit("Dashboards need the metrics list: hubble.metrics.enabled is empty, so Hubble exports "
                      "nothing.", e, HUBBLE_PATH + ("metrics", "enabled"))
            continue
        for i, entry in enumerate(enabled if isinstance(enabled, list) else []):
            name, _, options = str(entry).partition(":")
            if name != "httpV2":
                continue
            contexts = [o.partition("=")[2] for o in options.split(";") if o.startswith("labelsContext=")]
            labels = set(",".join(contexts).split(","))
            missing = [label for label in DASHBOARD_LABELS if label not in labels]
            if missing:
                yield Hit(f"Keep httpV2 labelsContext: the L7 HTTP dashboard groups by {', '.join(missing)}, "
                          "which this entry does not export.", e, HUBBLE_PATH + ("metrics", "enabled", i))


@rule(
    "HUB-04", WARNING,
    "Hubble metrics without a ServiceMonitor are never scraped",
    """
    The cilium chart renders the hubble ServiceMonitor only when hubble.metrics.serviceMonitor.enabled
    is true (upstream default false, not overridden by Cozystack). Cozystack's VMAgent picks up
    ServiceMonitors (VictoriaMetrics operator converter, selectAllByDefault) but nothing honours the
    prometheus.io/scrape annotation the chart puts on the hubble-metrics Service otherwise, so the
    dashboards stay empty. cozy-render's recommended values switch it on.
    """,
    [SRC_CILIUM_VALUES, SRC_HUBBLE_DOC, f"{_C}packages/system/victoria-metrics-operator/values.yaml",
     f"{_C}packages/system/monitoring-agents/templates/vmagent.yaml"],
)
def hub_04(ctx: RuleContext) -> Iterator[Hit]:
    for e, hubble in _hubble_on(ctx):
        if dig(hubble, "metrics", "enabled") and dig(hubble, "metrics", "serviceMonitor", "enabled") is not True:
            yield Hit("No ServiceMonitor will be created; Grafana dashboards stay empty "
                      "(set hubble.metrics.serviceMonitor.enabled: true).",
                      e, HUBBLE_PATH + ("metrics", "serviceMonitor", "enabled"))


@rule(
    "HUB-05", WARNING,
    "Hubble dashboards need the platform Monitoring hub",
    """
    The hubble dashboards are provisioned only for the platform Monitoring release (tenant-root /
    cozy-monitoring), not for tenant Grafanas. With monitoring.rootEnabled false in the platform
    values there is no such release: Hubble runs, relay and UI work, but no dashboard shows its metrics.
    """,
    [SRC_HUBBLE_DOC, f"{_C}packages/core/platform/values.yaml (monitoring.rootEnabled)"],
)
def hub_05(ctx: RuleContext) -> Iterator[Hit]:
    if not _hubble_on(ctx):
        return
    facts = ctx.facts
    if facts.get("monitoring", "rootEnabled") is False:
        yield Hit("Hubble dashboards are provisioned only with the platform Monitoring hub "
                  "(monitoring.rootEnabled is false).",
                  overlay_path=("platform", "values", "monitoring", "rootEnabled"))
