"""HAMI-* rules (reference section (g), "HAMi"): the HAMi device-plugin package and tenant addons.

They share the GPU rules' view of the rendered GPU route (``renderer.check.rules.gpu.GpuView``).
"""

from __future__ import annotations

from collections.abc import Iterator

from renderer.check.rules import Hit, RuleContext, rule
from renderer.check.rules.gpu import APPS_API, SRC_C, SRC_CONTAINER_DOC, SRC_W, gpu_view
from renderer.errors import ERROR
from renderer.tree import dig

# Exact text of packages/apps/kubernetes/templates/helmreleases/hami.yaml (HAMI-03).
HAMI03_MESSAGE = "addons.hami requires addons.gpuOperator to be enabled"


@rule(
    "HAMI-01", ERROR,
    "HAMi on top of the container variant is unsupported",
    """
    The container variant (and the Talos native overlay) turns the NVIDIA device plugin on; HAMi brings
    its own device plugin. Both register nvidia.com/gpu on the same nodes, and cozystack.hami's
    dependsOn only orders the install, it does not switch the operator's plugin off. HAMi is
    supported in tenant Kubernetes clusters: apps.cozystack.io/v1alpha1 Kubernetes with
    spec.addons.gpuOperator.enabled: true and spec.addons.hami.enabled: true, where the tenant chart
    disables the operator's device plugin itself.
    """,
    [f"{SRC_CONTAINER_DOC} (Fractional GPU sharing)", f"{SRC_W}kubernetes/gpu-sharing.md"],
)
def hami_01(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.hami_requested and v.serves_pods:
        yield Hit("HAMi on top of the container variant is unsupported: both device plugins would register "
                  "nvidia.com/gpu. Use HAMi in tenant Kubernetes clusters (addons.gpuOperator + addons.hami).",
                  **v.hami_at())


@rule(
    "HAMI-02", ERROR,
    "cozystack.hami depends on cozystack.gpu-operator",
    """
    The cozystack.hami PackageSource declares dependsOn: [cozystack.gpu-operator]; without a
    gpu-operator Package it stays DependenciesNotReady and never installs. gpu.hami needs gpu.variant
    default or vgpu on the management cluster (and see HAMI-01 for container).
    """,
    [f"{SRC_C}packages/core/platform/sources/hami.yaml"],
)
def hami_02(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.hami_requested and v.variant is None:
        yield Hit("cozystack.hami depends on cozystack.gpu-operator.", **v.hami_at())


@rule(
    "HAMI-03", ERROR,
    "Tenant Kubernetes: addons.hami requires addons.gpuOperator",
    """
    In a tenant Kubernetes cluster (apps.cozystack.io/v1alpha1 Kubernetes), HAMi needs the tenant's
    gpu-operator addon. The tenant chart fails with the quoted message, but only where the tenant
    namespace has etcd (_namespace.etcd); cozy-render flags it regardless, since the namespace's etcd is
    not known at render time.
    """,
    [f"{SRC_C}packages/apps/kubernetes/templates/helmreleases/hami.yaml"],
)
def hami_03(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.objects:
        if e.api_version != APPS_API or e.kind != "Kubernetes":
            continue
        addons = dig(e.obj, "spec", "addons")
        if dig(addons, "hami", "enabled") is True and dig(addons, "gpuOperator", "enabled") is not True:
            yield Hit(HAMI03_MESSAGE, e, ("spec", "addons", "hami", "enabled"))
