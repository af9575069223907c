"""Which GPU route a rendered cluster is on, read from the render itself (never from the overlay
keys alone: a hand-written ``packages:`` entry or ``platform.values`` can choose a route too).

Routes (reference (c) "Selecting a variant", "Talos vs apt-installed hosts"):

- ``passthrough`` / ``vgpu``: ``cozystack.gpu-operator`` variant ``default`` / ``vgpu``, rendered by
  the platform's iaas bundle or written by hand (route 2);
- ``container``: a standalone Package with ``variant: container`` (apt hosts, the driver and
  nvidia-container-toolkit on the host);
- ``talos-native``: a ``default``-variant Package with ``hostPaths.driverInstallDir:
  /var/nvidia-driver`` and the ``nvidia-driver-compat`` DaemonSet
  (``C:packages/system/gpu-operator/examples/values-native-talos.yaml``);
- ``none``: no gpu-operator Package at all.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from renderer.load.variants import Variants
from renderer.model import GPU_OPERATOR, GPU_OPERATOR_COMPONENT, HAMI
from renderer.tree import dig

NAMESPACE = "cozy-gpu-operator"  # the PackageSource's install namespace (reference (c) PackageSource facts)
TALOS_DRIVER_DIR = "/var/nvidia-driver"
COMPAT_DAEMONSET = "nvidia-driver-compat"
VERIFY_LABEL = "render.cozystack.io/gpu-verify"  # marks the opt-in verification Job (renderer.doctor.verify)

PASSTHROUGH, VGPU, CONTAINER, TALOS_NATIVE, NONE = "passthrough", "vgpu", "container", "talos-native", "none"
VM_ROUTES = (PASSTHROUGH, VGPU)
POD_ROUTES = (CONTAINER, TALOS_NATIVE)


class Route(NamedTuple):
    name: str  # passthrough | vgpu | container | talos-native | none
    variant: str | None  # the gpu-operator Package variant
    origin: str  # bundle (the platform renders it) | standalone (cozy-render renders it) | ""
    packages: tuple[str, ...]  # Packages the route needs Ready on the live cluster
    pull_secrets: tuple[str, ...] = ()  # vgpu: gpu.vgpuManager.imagePullSecrets (Secret names)
    device_manager: bool = False  # vgpu: gpu.vgpuDeviceManager.enabled
    verify_job: tuple[str, str] | None = None  # (namespace, name) of the rendered verification Job
    gpu_model: str | None = None  # the overlay's host.gpuModel
    generation: str | None = None  # vgpu: mdev | sriov from host.gpuModel (variants gpu/facts.yaml), None unknown

    def describe(self) -> str:
        if self.name == NONE:
            return "none (no cozystack.gpu-operator Package)"
        return f"{self.name} ({GPU_OPERATOR} variant {self.variant}, {self.origin})"


# What the documentation says runs in cozy-gpu-operator once the route works (issue 32 item 1):
# W:operations/gpu-container-workloads.md section 2 lists the container route's pods (the operator's
# Deployment plus these DaemonSets; nvidia-cuda-validator is the validator's one-shot pod);
# W:operations/troubleshooting/gpu-operator-host-driver.md and W:virtualization/{gpu,vgpu}.md name the
# VM routes' operands. Every route also needs the operator Deployment and its ClusterPolicy ready.
OPERATOR_DEPLOYMENT = "gpu-operator"
POD_ROUTE_DAEMONSETS = ("gpu-feature-discovery", "nvidia-dcgm-exporter", "nvidia-device-plugin-daemonset",
                        "nvidia-operator-validator")
VM_DAEMONSETS = {PASSTHROUGH: ("nvidia-vfio-manager", "nvidia-sandbox-device-plugin-daemonset",
                               "nvidia-sandbox-validator"),
                 VGPU: ("nvidia-vgpu-manager-daemonset", "nvidia-sandbox-device-plugin-daemonset",
                        "nvidia-sandbox-validator")}
VGPU_DEVICE_MANAGER_DAEMONSET = "nvidia-vgpu-device-manager"


def expected_daemonsets(route: Route) -> tuple[str, ...]:
    """The operand DaemonSets the route's documentation lists (nvidia-driver-compat on Talos is
    checked by its own unit, DOC-TALOS-COMPAT)."""
    if route.name in POD_ROUTES:
        return POD_ROUTE_DAEMONSETS
    if route.name == VGPU and route.device_manager:
        return (*VM_DAEMONSETS[VGPU], VGPU_DEVICE_MANAGER_DAEMONSET)
    return VM_DAEMONSETS.get(route.name, ())


def _generation(result: Any, model: Any) -> str | None:
    """mdev | sriov for host.gpuModel ("A100", "NVIDIA L40S"), as rule GPU-13 decides it."""
    if not isinstance(model, str) or not model.strip():
        return None
    import re

    variants = getattr(result, "variants", None)
    if variants is None:
        variants = Variants(None)
    (facts,) = variants.load("gpu/facts.yaml")
    name = re.sub(r"^NVIDIA\s+", "", model.strip(), flags=re.I).replace(" ", "").upper()
    return next((g for g, models in (facts.get("vgpuGenerations") or {}).items() if name in models), None)


def _values_of(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    component = ((spec.get("components") or {}).get(GPU_OPERATOR_COMPONENT) or {}) if isinstance(spec, dict) else {}
    values = component.get("values") if isinstance(component, dict) else None
    return values if isinstance(values, dict) else {}


def route_of(result: Any) -> Route:
    """The route of one ``RenderResult``."""
    objects = [e.obj for e in result.objects]
    ours = {e.name: e.obj for e in result.objects if e.is_package()}
    rendered = result.plan.facts.rendered_packages  # what the platform release renders
    verify = next(((str(o["metadata"].get("namespace") or "default"), str(o["metadata"]["name"]))
                   for o in objects if o.get("kind") == "Job"
                   and VERIFY_LABEL in ((o.get("metadata") or {}).get("labels") or {})), None)
    hami = (HAMI,) if HAMI in ours or HAMI in rendered else ()
    written = ours.get(GPU_OPERATOR)
    if written is not None and (written.get("spec") or {}).get("variant") not in (None, ""):
        variant = str(written["spec"]["variant"])
        origin = "standalone"
        values = _values_of(written)
    elif GPU_OPERATOR in rendered:
        variant = rendered[GPU_OPERATOR].variant or "default"
        origin = "bundle" if written is None else "bundle, patched"
        values = _values_of(written) if written is not None else {}
    elif written is not None:
        variant, origin, values = "default", "standalone", _values_of(written)
    else:
        return Route(NONE, None, "", hami, verify_job=verify)
    operator = values.get("gpu-operator") if isinstance(values.get("gpu-operator"), dict) else {}
    compat = any(o.get("kind") == "DaemonSet" and o["metadata"].get("name") == COMPAT_DAEMONSET for o in objects)
    packages = (GPU_OPERATOR, *hami)
    if variant == "container":
        return Route(CONTAINER, variant, origin, packages, verify_job=verify)
    if variant == "default" and (compat or dig(operator, "hostPaths", "driverInstallDir") == TALOS_DRIVER_DIR):
        return Route(TALOS_NATIVE, variant, origin, packages, verify_job=verify)
    if variant == "vgpu":
        facts = result.plan.facts
        forwarded = dig(operator, "vgpuManager") or facts.get("gpu", "vgpuManager") or {}
        secrets = forwarded.get("imagePullSecrets") if isinstance(forwarded, dict) else None
        names = tuple(str(s) for s in secrets or [] if isinstance(s, str))
        manager = dig(operator, "vgpuDeviceManager", "enabled")
        if manager is None:
            manager = facts.get("gpu", "vgpuDeviceManager", "enabled")
        model = result.overlay.get("host", "gpuModel")
        return Route(VGPU, variant, origin, packages, names, manager is True, verify,
                     model if isinstance(model, str) else None, _generation(result, model))
    return Route(PASSTHROUGH, variant, origin, packages, verify_job=verify)
