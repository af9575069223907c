"""GPU operator: ``host.os`` x ``gpu.variant`` (+ ``gpu.hami`` and the ``gpu.*`` knobs) -> the route
Cozystack documents for it (reference section (c) "Selecting a variant"; design.md route table).

- ``default`` / ``vgpu`` -> bundle route: the platform renders ``cozystack.gpu-operator`` itself, so we
  only name it in ``bundles.enabledPackages``, set ``bundles.iaas.gpuOperatorVariant`` and forward the
  ``gpu.*`` knobs to platform values ``gpu:``, where ``templates/bundles/iaas.yaml`` reads them.
- ``container`` on apt -> the bundle cannot render that variant (PLT-03/GPU-03), so the Package is
  standalone and ``cozystack.gpu-operator`` goes to ``bundles.disabledPackages`` (disabled wins, so a
  shared base that enables it cannot make the platform render a second copy).
- ``container`` on Talos -> the Talos native overlay (a ``default``-variant Package with pod-GPU values,
  the ``nvidia-driver-compat`` DaemonSet and the ``dcgm-custom-metrics`` ConfigMap), because the Talos
  NVIDIA extension puts the driver under a non-standard prefix (GPU-06/GPU-07).
- ``none`` (or no ``gpu:``) renders nothing GPU-related.

What each route renders lives in ``variants/gpu/`` as data. Combinations Cozystack refuses (Talos x
vgpu, apt driver x passthrough, HAMi on the container variant, ...) are rules in
``renderer/check/rules/gpu.py``; they run on the rendered result, so they also catch the same mistakes
written by hand in ``packages:`` or ``platform.values``. Only contradictions inside the overlay
itself, which leave no sensible render to check, are refused here (code ``OVL-GPU``).
"""

from __future__ import annotations

from typing import Any

from renderer.errors import fail
from renderer.model import GPU_KNOBS, GPU_OPERATOR, GPU_OPERATOR_COMPONENT, HAMI, Derived
from renderer.resolve.features.context import FeatureContext
from renderer.tree import copy_tree, helm_merge

BUNDLE_VARIANTS = ("default", "vgpu")

CONTAINER_PACKAGE = "gpu/container-package.yaml"
VERIFY_JOB = "gpu/verify-cuda-job.yaml"  # gpu.verify: the documentation's sample CUDA pod as a Job
TALOS_NATIVE_FILES = ("gpu/talos-native-package.yaml", "gpu/talos-nvidia-driver-compat-daemonset.yaml",
                      "gpu/talos-dcgm-custom-metrics-configmap.yaml")

_VARIANT = ("gpu", "variant")
_VALUES = ("gpu", "values")
_VERIFY = ("gpu", "verify")


# The route each gpu.variant takes (reference (c)): the iaas bundle's passthrough or vGPU operator for
# VMs, or pods' GPUs from a standalone Package (apt) or the Talos native overlay. The plan records it
# (Plan.gpu_route) and ls shows it; doctor refines it from the objects (a hand-written operator Package too).
GPU_ROUTES = {"default": "passthrough", "vgpu": "vgpu"}


def contribute(ctx: FeatureContext) -> None:
    gpu = ctx.overlay.get("gpu")
    if not isinstance(gpu, dict):
        return
    variant = gpu.get("variant") or "none"
    if variant in BUNDLE_VARIANTS:
        ctx.gpu_route = GPU_ROUTES[variant]
        _bundle_route(ctx, gpu, variant)
        if gpu.get("hami") is True:
            # cozystack.hami is an optional iaas package; on the container/none routes HAMI-01/HAMI-02
            # refuse it, so it is only enabled where the platform can render it next to the operator.
            ctx.enable(HAMI, ctx.overlay.locate(("gpu", "hami")))
    elif variant == "container":
        if ctx.overlay.get("host", "os") == "talos":
            ctx.gpu_route = "talos-native"
            _talos_native_route(ctx, gpu)
        else:
            ctx.gpu_route = "container"
            _container_route(ctx, gpu)
    if gpu.get("verify") is True:
        _verify_job(ctx, variant)


def _verify_job(ctx: FeatureContext, variant: str) -> None:
    """The sample CUDA pod requests nvidia.com/gpu, which only the pod routes advertise (the VM routes
    register nvidia.com/<model> for KubeVirt; a VM is verified from its guest, W:virtualization/gpu.md)."""
    at = ctx.overlay.locate(_VERIFY)
    if variant != "container":
        raise fail("OVL-GPU", f"gpu.verify runs the documentation's sample CUDA pod, which needs nvidia.com/gpu: only "
                   f"gpu.variant: container advertises it (gpu.variant is {variant})", at)
    for n, obj in enumerate(ctx.variants.load(VERIFY_JOB)):
        ctx.add(obj, at, [((), _VERIFY)], role="manifest",
                derived=[Derived((), "gpu", _VERIFY, VERIFY_JOB, (n,), "GPU verification Job")])


def _bundle_route(ctx: FeatureContext, gpu: dict[str, Any], variant: str) -> None:
    overlay = ctx.overlay
    at = overlay.locate(_VARIANT)
    if "values" in gpu:
        raise fail("OVL-GPU", f"gpu.values applies to the standalone Package of gpu.variant: container; with "
                   f"gpu.variant: {variant} the platform renders cozystack.gpu-operator itself — use "
                   "gpu.vgpuManager / gpu.vgpuDeviceManager, which the platform forwards", overlay.locate(_VALUES))
    values = ctx.platform_values  # bundles, bundles.iaas and gpu are mappings: the overlay schema says so
    facts = ctx.requested
    if not facts.iaas_renders:
        # When iaas.enabled is true but the system bundle is wrong, PLT-04/PLT-05 quote the chart's own
        # failure; here nothing would fail, the operator would just never be installed.
        raise fail("OVL-GPU", f"gpu.variant: {variant} installs cozystack.gpu-operator through the iaas bundle, "
                   f"which platform variant {facts.variant} does not render (use isp-full or isp-full-generic); "
                   "passthrough and vGPU serve KubeVirt VMs, which need that bundle too", at)
    bundles = values.setdefault("bundles", {})
    disabled = bundles.get("disabledPackages")
    if isinstance(disabled, list) and GPU_OPERATOR in disabled:
        raise fail("OVL-GPU", f"gpu.variant: {variant} needs {GPU_OPERATOR} bundle-enabled, but "
                   "platform.values.bundles.disabledPackages lists it and disabled wins (PLT-07)",
                   overlay.locate(("platform", "values", "bundles", "disabledPackages", disabled.index(GPU_OPERATOR))))
    iaas = bundles.setdefault("iaas", {})
    written = iaas.get("gpuOperatorVariant")
    if written not in (None, "", variant):
        raise fail("OVL-GPU", f"platform.values.bundles.iaas.gpuOperatorVariant: {written} contradicts "
                   f"gpu.variant: {variant}; set the variant in gpu.variant only",
                   overlay.locate(("platform", "values", "bundles", "iaas", "gpuOperatorVariant")))

    ctx.enable(GPU_OPERATOR, at)
    iaas["gpuOperatorVariant"] = variant
    ctx.derive(("bundles", "iaas", "gpuOperatorVariant"), "gpu", _VARIANT, f"bundle route for gpu.variant: {variant}")
    knobs = {k: copy_tree(gpu[k]) for k in GPU_KNOBS if k in gpu}
    if knobs:
        platform_gpu = values.setdefault("gpu", {})
        for key, value in knobs.items():
            # gpu.* is the more specific place, so it wins over platform.values.gpu (Helm merge: maps
            # merge, lists replace) exactly as a later overlay layer would.
            platform_gpu[key] = helm_merge(platform_gpu.get(key), value)
            ctx.derived.append(Derived(("gpu", key), "gpu", _VARIANT, note=f"gpu.{key} forwarded to the platform",
                                       copied_from=("gpu", key)))


def _with_values(package: dict[str, Any], gpu: dict[str, Any]) -> dict[str, Any]:
    """Merge gpu.values (component values, Helm semantics) into the route's Package."""
    extra = gpu.get("values")
    if not extra:
        return package
    spec = package.setdefault("spec", {})
    component = spec.setdefault("components", {}).setdefault(GPU_OPERATOR_COMPONENT, {})
    component["values"] = helm_merge(component.get("values") or {}, extra)
    return package


def _package_origins() -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    return [
        (("spec", "components", GPU_OPERATOR_COMPONENT, "values"), _VALUES),
        (("spec", "variant"), _VARIANT),
        ((), _VARIANT),
    ]


def _container_route(ctx: FeatureContext, gpu: dict[str, Any]) -> None:
    at = ctx.overlay.locate(_VARIANT)
    ctx.disable(GPU_OPERATOR, at)
    (package,) = ctx.variants.load(CONTAINER_PACKAGE)
    ctx.add(_with_values(package, gpu), at, _package_origins(), role="package",
            derived=[Derived((), "gpu", _VARIANT, CONTAINER_PACKAGE, (0,), "container route (apt)")])


def _talos_native_route(ctx: FeatureContext, gpu: dict[str, Any]) -> None:
    at = ctx.overlay.locate(_VARIANT)
    ctx.disable(GPU_OPERATOR, at)
    package_file, *companions = TALOS_NATIVE_FILES
    variants = ctx.variants
    (package,) = variants.load(package_file)
    ctx.add(_with_values(package, gpu), at, _package_origins(), role="package",
            derived=[Derived((), "gpu", _VARIANT, package_file, (0,), "Talos native route")])
    for relpath in companions:
        for n, obj in enumerate(variants.load(relpath)):
            ctx.add(obj, at, [((), _VARIANT)], role="manifest",
                    derived=[Derived((), "gpu", _VARIANT, relpath, (n,), "Talos native route")])
