"""GPU-* rules (reference section (g), "GPU operator"); HAMI-* rules are in ``renderer.check.rules.hami``.

Rules read the rendered result, not only the ``gpu:`` overlay keys, so a route written by hand
(``packages:`` or ``platform.values``) is held to the same facts as one the gpu feature renders. Host
facts come from the overlay's ``host:`` (``os``, ``nvidiaDriver``, ``nvidiaContainerRuntime``,
``gpuModel``, ``nodes``); a rule whose fact is absent is skipped, never guessed.

PLT-03 (an invalid ``bundles.iaas.gpuOperatorVariant``) lives with the platform rules; its
``container`` case is reported once, here, as GPU-03.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from typing import Any

from renderer.check.rules import Hit, RuleContext, rule
from renderer.errors import ERROR, WARNING
from renderer.model import GPU_KNOBS, GPU_OPERATOR, HAMI, PLATFORM_PACKAGE, VGPU_ONLY_KNOBS, Emitted
from renderer.platform_chart.gotemplate import go_quote
from renderer.resolve.platform import PlatformFacts, go_format, go_truthy
from renderer.tree import dig

KUBEVIRT = "cozystack.kubevirt"
OPERATOR_NAMESPACE = "cozy-gpu-operator"  # install.namespace of sources/gpu-operator.yaml
TALOS_DRIVER_DIR = "/var/nvidia-driver"
UPSTREAM_DRIVER_DIR = "/run/nvidia/driver"  # NVIDIA gpu-operator values.yaml hostPaths.driverInstallDir
COMPAT_DAEMONSET = "nvidia-driver-compat"
DCGM_CONFIGMAP = "dcgm-custom-metrics"
WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"
APPS_API = "apps.cozystack.io/v1alpha1"

# Exact text of templates/bundles/iaas.yaml L41-43 (PLT-03), so users recognise the chart's failure.
PLT03_MESSAGE = 'bundles.iaas.gpuOperatorVariant must be "default" or "vgpu", got "{value}"'

SRC_C = "C:"  # cozystack/cozystack @ 3c780acd417f086f8f18d040d0d7020ff55d3ba3
SRC_W = "W:"  # cozystack/website @ aa0d9e1be37f3ab18e663c092f39c09e444c739f, content/en/docs/next/
SRC_SOURCES = f"{SRC_C}packages/core/platform/sources/gpu-operator.yaml"
SRC_IAAS = f"{SRC_C}packages/core/platform/templates/bundles/iaas.yaml"
SRC_CONTAINER_DOC = f"{SRC_W}operations/gpu-container-workloads.md"
SRC_HOST_DRIVER_DOC = f"{SRC_W}operations/troubleshooting/gpu-operator-host-driver.md"
SRC_VGPU_DOC = f"{SRC_W}virtualization/vgpu.md"
SRC_GPU_DOC = f"{SRC_W}virtualization/gpu.md"
SRC_EXAMPLES = f"{SRC_C}packages/system/gpu-operator/examples/ (values-native-talos.yaml, README.md)"


class GpuView:
    """What the render does with the GPU operator, whichever way the user asked for it."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.overlay = ctx.overlay

    @cached_property
    def facts(self) -> PlatformFacts:
        return self.ctx.facts

    @cached_property
    def platform(self) -> Emitted | None:
        return next((e for e in self.ctx.objects if e.is_package(PLATFORM_PACKAGE)), None)

    def package(self, name: str) -> Emitted | None:
        return next((e for e in self.ctx.objects if e.is_package(name)), None)

    @cached_property
    def standalone(self) -> Emitted | None:
        """A cozystack.gpu-operator Package in our output (not the one the platform chart renders)."""
        return self.package(GPU_OPERATOR)

    @property
    def bundle(self) -> bool:
        return self.facts.gpu_operator_bundle_enabled

    @cached_property
    def variant(self) -> str | None:
        """The gpu-operator variant that will run, or None when no gpu-operator is installed."""
        if self.standalone is not None:
            written = dig(self.standalone.obj, "spec", "variant")
            if written not in (None, ""):
                return str(written)
            # An empty variant is "default" for the controller; over a bundle-rendered copy the
            # platform's variant is what the merged object ends up with.
            return self.facts.gpu_operator_variant if self.bundle else "default"
        return self.facts.gpu_operator_variant if self.bundle else None

    @cached_property
    def operator_values(self) -> dict[str, Any]:
        """Values of the vendored NVIDIA chart (the ``gpu-operator:`` key) in our standalone Package."""
        if self.standalone is None:
            return {}
        values = dig(self.standalone.obj, "spec", "components", "gpu-operator", "values", "gpu-operator")
        return values if isinstance(values, dict) else {}

    @property
    def serves_pods(self) -> bool:
        """GPUs go to pods through the NVIDIA device plugin: the container variant, or the Talos native
        overlay (variant default with sandboxWorkloads disabled and the device plugin on)."""
        if self.variant == "container":
            return True
        return self.standalone is not None and dig(self.operator_values, "sandboxWorkloads", "enabled") is False

    @property
    def host_os(self) -> str | None:
        return self.overlay.get("host", "os")

    def chosen_at(self) -> dict[str, Any]:
        """Hit location of the line that chose the variant."""
        if self.overlay.get("gpu", "variant") is not None:
            return {"overlay_path": ("gpu", "variant")}
        if self.standalone is not None:
            return {"emitted": self.standalone, "obj_path": ("spec", "variant")}
        if self.overlay.get("platform", "values", "bundles", "iaas", "gpuOperatorVariant") is not None:
            return {"overlay_path": ("platform", "values", "bundles", "iaas", "gpuOperatorVariant")}
        return self.enabled_at(GPU_OPERATOR)

    def enabled_at(self, name: str) -> dict[str, Any]:
        user = self.overlay.get("platform", "values", "bundles", "enabledPackages")
        if isinstance(user, list) and name in user:
            return {"overlay_path": ("platform", "values", "bundles", "enabledPackages", user.index(name))}
        return {"overlay_path": ("gpu", "variant") if self.overlay.get("gpu", "variant") else ("platform",)}

    def knob(self, *path: Any) -> Any:
        """A gpu.* knob as the platform chart will read it (effective platform values)."""
        return self.facts.get("gpu", *path)

    def knob_at(self, *path: Any) -> dict[str, Any]:
        """Where a forwarded gpu.* knob was written: gpu.<knob> in the overlay, else platform.values.gpu."""
        if path and self.overlay.get("gpu", path[0]) is not None:
            return {"overlay_path": ("gpu", *path)}
        return {"overlay_path": ("platform", "values", "gpu", *path)}

    def knob_keys(self) -> list[str]:
        """Forwarded knobs the user set, in either place."""
        platform_gpu = self.overlay.get("platform", "values", "gpu")
        keys = {k for k in GPU_KNOBS if self.overlay.get("gpu", k) is not None}
        if isinstance(platform_gpu, dict):
            keys |= {k for k in GPU_KNOBS if platform_gpu.get(k) is not None}
        return [k for k in GPU_KNOBS if k in keys]

    @cached_property
    def hami_rendered(self) -> Emitted | bool:
        standalone = self.package(HAMI)
        if standalone is not None:
            return standalone
        return self.facts.iaas_valid and self.facts.optional_enabled(HAMI)

    def hami_at(self) -> dict[str, Any]:
        if self.overlay.get("gpu", "hami") is True:
            return {"overlay_path": ("gpu", "hami")}
        if isinstance(self.hami_rendered, Emitted):
            return {"emitted": self.hami_rendered, "obj_path": ()}
        return self.enabled_at(HAMI)

    @property
    def hami_requested(self) -> bool:
        return self.overlay.get("gpu", "hami") is True or bool(self.hami_rendered)

    def has_object(self, api_version: str, kind: str, namespace: str, name: str) -> bool:
        return any(e.api_version == api_version and e.kind == kind and e.namespace == namespace and e.name == name
                   for e in self.ctx.objects)


def gpu_view(ctx: RuleContext) -> GpuView:
    # One view per render: several rules share its cached facts.
    return ctx.memo("gpu-view", lambda: GpuView(ctx))


def _nonempty(value: Any) -> bool:
    return value not in (None, "", [], {})


# --- GPU operator ------------------------------------------------------------------------------


@rule(
    "GPU-01", ERROR,
    "gpu-operator variants are default, vgpu, container",
    """
    The cozystack.gpu-operator PackageSource has exactly three variants: default (VFIO passthrough),
    vgpu and container. A Package naming any other variant (for example `passthrough`) stays
    Ready=False with VariantNotFound. gpu.variant is limited to these by the overlay schema; this rule
    catches a hand-written Package in packages:.
    """,
    [SRC_SOURCES],
)
def gpu_01(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    written = dig(v.standalone.obj, "spec", "variant") if v.standalone else None
    if written not in (None, "") and written not in ctx.data("gpu/facts.yaml")["operatorVariants"]:
        yield Hit(f"gpu-operator variants are default, vgpu, container (got {written!r}).",
                  v.standalone, ("spec", "variant"))


@rule(
    "GPU-02", ERROR,
    "The container variant cannot come from the bundle",
    """
    The platform chart renders cozystack.gpu-operator itself when it is in bundles.enabledPackages
    (and not disabled) and the iaas bundle renders, always with variant default or vgpu. A standalone
    container Package with the same name would be a second writer of one cluster-scoped object: the
    platform release adopts it (helm-controller v1.5.0 takes ownership) and re-asserts its own variant
    on every upgrade (PLT-11/PLT-12). gpu.variant:
    container avoids this by putting the name in bundles.disabledPackages; this rule catches the same
    Package written by hand while the bundle still enables it.
    """,
    [f"{SRC_CONTAINER_DOC} §1", SRC_IAAS],
)
def gpu_02(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.standalone is not None and dig(v.standalone.obj, "spec", "variant") == "container" and v.bundle:
        yield Hit("The container variant cannot come from the bundle: remove cozystack.gpu-operator from "
                  "bundles.enabledPackages (or add it to disabledPackages) and render a standalone Package "
                  "with variant: container.", **v.enabled_at(GPU_OPERATOR))


@rule(
    "GPU-03", ERROR,
    "bundles.iaas.gpuOperatorVariant cannot be container",
    """
    Special case of PLT-03, reported once, here. Whenever the iaas bundle renders, the platform chart
    validates bundles.iaas.gpuOperatorVariant (even with gpu-operator not enabled) and accepts only
    default or vgpu; `container` fails the whole platform release with the quoted message. The container
    variant is installed through a standalone Package instead (gpu.variant: container). When iaas does
    not render the value is never read, and when an earlier iaas.yaml guard fails (PLT-04/PLT-05) that
    failure is the one the chart reports.
    """,
    [f"{SRC_IAAS} L41-43", f"{SRC_C}packages/core/platform/tests/bundles_gpu_kubevirt_wiring_test.yaml "
     '(got "container")'],
)
def gpu_03(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.facts.iaas_valid and v.facts.get("bundles", "iaas", "gpuOperatorVariant") == "container":
        yield Hit(PLT03_MESSAGE.format(value="container") + " (use a standalone Package for container: "
                  "gpu.variant: container)",
                  v.platform, ("spec", "components", "platform", "values", "bundles", "iaas", "gpuOperatorVariant"))


@rule(
    "GPU-04", ERROR,
    "Passthrough needs a host without the NVIDIA driver (apt hosts)",
    """
    The default (passthrough) variant binds GPUs to vfio-pci. On a node whose host has an NVIDIA
    driver, the nvidia-vfio-manager init container (k8s-driver-manager, isHostDriver) finds it, labels
    the node nvidia.com/gpu.deploy.driver=pre-installed and exits non-zero: Init:CrashLoopBackOff, and
    nvidia-sandbox-validator fails "device not bound to 'vfio-pci'". FORCE_REINSTALL does not bypass it.
    Decided from host.os: apt and host.nvidiaDriver: true; skipped when host.nvidiaDriver is not set.
    Fix: purge the driver (the troubleshooting page lists the steps) and set host.nvidiaDriver: false,
    or use gpu.variant: container to serve pods instead of VMs.
    """,
    [SRC_HOST_DRIVER_DOC],
)
def gpu_04(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.host_os == "apt" and v.overlay.get("host", "nvidiaDriver") is True and v.variant == "default" \
            and not v.serves_pods:
        yield Hit("Passthrough cannot bind vfio-pci while a host NVIDIA driver is present (isHostDriver guard); "
                  "purge the host driver or use the container variant.", **v.chosen_at())


@rule(
    "GPU-05", ERROR,
    "vGPU is not supported on Talos",
    """
    The vGPU Manager is NVIDIA's proprietary Linux KVM .run package built into an image by the user;
    it cannot be redistributed as a Talos system extension (siderolabs/extensions#461), so the vgpu
    variant has no way to load on Talos nodes. Use passthrough (gpu.variant: default) on Talos, or
    vGPU on apt-installed Ubuntu hosts.
    """,
    [f"{SRC_VGPU_DOC} (prerequisites, OS table)"],
)
def gpu_05(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.host_os == "talos" and v.variant == "vgpu":
        yield Hit("vGPU is not supported on Talos (proprietary vGPU Manager cannot be redistributed).",
                  **v.chosen_at())


@rule(
    "GPU-06", WARNING,
    "On Talos, use the native overlay instead of the container variant",
    """
    The container variant expects the driver under the standard prefix with the toolkit registered in
    containerd (apt hosts). On Talos the NVIDIA system extension installs it under /usr/local/glibc and
    /usr/local/bin, so the validator never finds it. gpu.variant: container on a Talos host renders the
    values-native-talos overlay instead (driverInstallDir /var/nvidia-driver + the nvidia-driver-compat
    DaemonSet + the dcgm-custom-metrics ConfigMap); this rule catches a container Package written by
    hand for a Talos cluster.
    """,
    [f"{SRC_VGPU_DOC} (OS table)", f"{SRC_C}packages/system/gpu-operator/examples/README.md"],
)
def gpu_06(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.host_os == "talos" and v.standalone is not None and v.variant == "container":
        yield Hit("On Talos the driver lives under a non-standard prefix; use the values-native-talos overlay "
                  "(driverInstallDir /var/nvidia-driver + nvidia-driver-compat DaemonSet).",
                  v.standalone, ("spec", "variant"))


@rule(
    "GPU-07", ERROR,
    "Talos GPU overlay is incomplete",
    """
    The values-native-talos overlay points the validator at /var/nvidia-driver, which only the
    nvidia-driver-compat DaemonSet fills (workaround for NVIDIA/gpu-operator#1687), and names the
    dcgm-custom-metrics ConfigMap as the DCGM exporter's metrics list. Without the DaemonSet the
    validator never passes; without the ConfigMap dcgm-exporter cannot start with its configured
    metrics file. Both must be in namespace cozy-gpu-operator. gpu.variant: container on Talos renders
    all three; this rule catches the overlay copied by hand without its companions, and the overlay on
    a Talos host (variant default with sandboxWorkloads.enabled: false) whose driverInstallDir was set
    back to the upstream /run/nvidia/driver (or left out, which is the same default): the Talos
    extension never puts a driver there, so the validator never passes.
    """,
    [SRC_EXAMPLES],
)
def gpu_07(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.standalone is None:
        return
    base = ("spec", "components", "gpu-operator", "values", "gpu-operator")
    install_dir = dig(v.operator_values, "hostPaths", "driverInstallDir")
    if v.host_os == "talos" and v.variant == "default" and v.serves_pods and install_dir != TALOS_DRIVER_DIR:
        written = install_dir if install_dir is not None else f"{UPSTREAM_DRIVER_DIR} (the upstream default)"
        where = base + (("hostPaths", "driverInstallDir") if install_dir is not None
                        else ("sandboxWorkloads", "enabled"))
        yield Hit(f"Talos GPU overlay is incomplete: hostPaths.driverInstallDir is {written}, not {TALOS_DRIVER_DIR}; "
                  f"the Talos NVIDIA extension puts no driver there, so the validator never passes.",
                  v.standalone, where)
    if install_dir == TALOS_DRIVER_DIR and \
            not v.has_object("apps/v1", "DaemonSet", OPERATOR_NAMESPACE, COMPAT_DAEMONSET):
        yield Hit(f"Talos GPU overlay is incomplete: DaemonSet {OPERATOR_NAMESPACE}/{COMPAT_DAEMONSET} is not "
                  f"rendered (it stages the driver into {TALOS_DRIVER_DIR}).",
                  v.standalone, base + ("hostPaths", "driverInstallDir"))
    if dig(v.operator_values, "dcgmExporter", "config", "name") == DCGM_CONFIGMAP and \
            not v.has_object("v1", "ConfigMap", OPERATOR_NAMESPACE, DCGM_CONFIGMAP):
        yield Hit(f"Talos GPU overlay is incomplete: ConfigMap {OPERATOR_NAMESPACE}/{DCGM_CONFIGMAP} is not "
                  "rendered (dcgmExporter.config.name refers to it).",
                  v.standalone, base + ("dcgmExporter", "config", "name"))


@rule(
    "GPU-08", WARNING,
    "No driverInstallDir override is needed with an apt-installed driver",
    """
    On apt hosts the container variant uses the driver the host installed under the standard prefix;
    hostPaths.driverInstallDir overrides belong to the Talos native overlay. Pointing the validator
    elsewhere on apt makes it wait for files that are not there. For the same reason the variant's
    values file switches the operator's own driver and toolkit off (driver.enabled: false,
    toolkit.enabled: false): turned back on (any Go-truthy value, as the NVIDIA chart reads it), the
    operator installs a second driver or rewrites the containerd configuration the host's
    nvidia-ctk set up.
    """,
    [SRC_CONTAINER_DOC, f"{SRC_C}packages/system/gpu-operator/values-container.yaml"],
)
def gpu_08(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.host_os == "apt" and v.variant == "container" and \
            dig(v.operator_values, "hostPaths", "driverInstallDir") is not None:
        yield Hit("No driverInstallDir override is needed with an apt-installed driver.", v.standalone,
                  ("spec", "components", "gpu-operator", "values", "gpu-operator", "hostPaths", "driverInstallDir"))
    if v.host_os == "apt" and v.variant == "container" and v.standalone is not None:
        for component, what in (("driver", "a driver container over the apt-installed driver"),
                                ("toolkit", "its own container toolkit over the host's nvidia-ctk configuration")):
            enabled = dig(v.operator_values, component, "enabled")
            if go_truthy(enabled):
                shown = "true" if enabled is True else \
                    f"{go_quote(enabled) if isinstance(enabled, str) else go_format(enabled)} (read as true)"
                yield Hit(f"{component}.enabled: {shown} on an apt host installs {what}; the container "
                          f"variant uses the host's (values-container.yaml sets {component}.enabled: false).",
                          v.standalone, ("spec", "components", "gpu-operator", "values", "gpu-operator", component,
                                         "enabled"))


@rule(
    "GPU-09", ERROR,
    "A node label nvidia.com/gpu.workload.config other than container stops the device plugin",
    """
    With sandboxWorkloads disabled, the operator serves pods on nodes without the
    nvidia.com/gpu.workload.config label or with it set to container. The reference states this for the
    container variant; cozy-render applies it to the Talos native overlay too, since that overlay sets
    the same sandboxWorkloads.enabled: false (our reading, not a documented statement). A label left
    over from passthrough (vm-passthrough) keeps the device plugin from serving that node. Remove it
    with `kubectl label node <node> nvidia.com/gpu.workload.config-`.
    Node labels are cluster facts: this rule reads host.nodes[].labels and is skipped when the overlay
    lists no nodes.
    """,
    [f"{SRC_CONTAINER_DOC} (prerequisites)"],
)
def gpu_09(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    nodes = v.overlay.get("host", "nodes")
    if not v.serves_pods or not isinstance(nodes, list):
        return
    for i, node in enumerate(nodes):
        labels = node.get("labels") if isinstance(node, dict) else None
        if isinstance(labels, dict) and WORKLOAD_LABEL in labels and labels[WORKLOAD_LABEL] != "container":
            name = node.get("name") or f"host.nodes[{i}]"
            yield Hit(f"Remove the {WORKLOAD_LABEL} label from {name}; the device plugin will not serve it.",
                      overlay_path=("host", "nodes", i, "labels", WORKLOAD_LABEL))


@rule(
    "GPU-10", WARNING,
    "Register the NVIDIA runtime with containerd for the container variant",
    """
    The container variant leaves the toolkit to the host (toolkit.enabled: false). Installing
    nvidia-container-toolkit with apt does not wire containerd: `nvidia-ctk runtime configure
    --runtime=containerd` and a containerd restart must put the nvidia runtime into
    /etc/containerd/config.toml (default, or reachable through a RuntimeClass). Set
    host.nvidiaContainerRuntime: true once every GPU node is configured; until the overlay asserts it,
    this warning stays.
    """,
    [f"{SRC_CONTAINER_DOC} (prerequisites)", f"{SRC_C}docs/gpu-vgpu.md"],
)
def gpu_10(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.host_os == "apt" and v.variant == "container" and v.overlay.get("host", "nvidiaContainerRuntime") is not True:
        where = {"overlay_path": ("host", "nvidiaContainerRuntime")} \
            if v.overlay.get("host", "nvidiaContainerRuntime") is not None else v.chosen_at()
        yield Hit("Run nvidia-ctk runtime configure --runtime=containerd and restart containerd on GPU nodes.",
                  **where)


@rule(
    "GPU-11", ERROR,
    "vGPU needs a private vGPU Manager image",
    """
    values-vgpu.yaml ships vgpuManager with an empty repository and version: NVIDIA does not publish the
    vGPU Manager image; users build it from NVIDIA's gpu-driver-container (vgpu-manager/<os>/) with the
    Linux KVM .run and push it to a private registry. Without repository and version the
    nvidia-vgpu-manager DaemonSet cannot pull anything. On the bundle route set gpu.vgpuManager
    (forwarded to the Package by the platform); a hand-written vgpu Package needs
    gpu-operator.vgpuManager.repository and .version in its values.
    """,
    [f"{SRC_C}packages/system/gpu-operator/values-vgpu.yaml",
     f"{SRC_C}packages/core/platform/values.yaml (gpu comments)", SRC_VGPU_DOC],
)
def gpu_11(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    message = "vGPU needs a private vGPU Manager image: set gpu.vgpuManager.repository and version."
    if v.bundle and v.facts.gpu_operator_variant == "vgpu":
        manager = v.knob("vgpuManager")
        missing = [k for k in ("repository", "version") if not _nonempty(dig(manager, k))]
        if missing:
            where = v.knob_at("vgpuManager") if manager is not None else v.chosen_at()
            yield Hit(f"{message} (missing: {', '.join(missing)})", **where)
    elif v.standalone is not None and v.variant == "vgpu":
        manager = v.operator_values.get("vgpuManager")
        missing = [k for k in ("repository", "version") if not _nonempty(dig(manager, k))]
        if missing:
            yield Hit(f"{message} (missing gpu-operator.vgpuManager.{' and .'.join(missing)})",
                      v.standalone, ("spec", "components", "gpu-operator", "values", "gpu-operator", "vgpuManager"))


@rule(
    "GPU-12", ERROR,
    "imagePullSecrets is a list of Secret names (strings)",
    """
    The NVIDIA chart reads vgpuManager.imagePullSecrets (like every per-component imagePullSecrets) as
    a list of Secret names, not the Kubernetes [{name: ...}] shape; objects there break the rendered
    DaemonSet, and so does a single name written as a string (or a mapping) instead of a list: the
    documentation's example is a list of strings. The Secret itself is a docker-registry Secret in
    cozy-gpu-operator.
    """,
    [f"{SRC_VGPU_DOC} (example comment)"],
)
def gpu_12(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    message = "imagePullSecrets is a list of Secret names (strings)."
    secrets = v.knob("vgpuManager", "imagePullSecrets")
    if isinstance(secrets, list):
        for i, item in enumerate(secrets):
            if not isinstance(item, str):
                yield Hit(message, **v.knob_at("vgpuManager", "imagePullSecrets", i))
    elif _nonempty(secrets):
        # A bare name (or a map) is not the list the documentation states: the NVIDIA chart ranges over it.
        yield Hit(f"{message[:-1]}, not {_shape(secrets)}: write it as a list.",
                  **v.knob_at("vgpuManager", "imagePullSecrets"))
    base = ("spec", "components", "gpu-operator", "values", "gpu-operator", "vgpuManager", "imagePullSecrets")
    secrets = dig(v.operator_values, "vgpuManager", "imagePullSecrets")
    if isinstance(secrets, list):
        for i, item in enumerate(secrets):
            if not isinstance(item, str):
                yield Hit(message, v.standalone, (*base, i))
    elif _nonempty(secrets):
        yield Hit(f"{message[:-1]}, not {_shape(secrets)}: write it as a list.", v.standalone, base)


def _shape(value: Any) -> str:
    """How a user would name the YAML shape of ``value`` (a string, a mapping, a number, a boolean)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (int, float)):
        return "a number"
    return "a list"


def _read_as_true(written: Any) -> str:
    """`` (the chart reads "no" as true)`` for a Go-truthy value that is not the boolean true, else ""."""
    if written is True:
        return ""
    shown = go_quote(written) if isinstance(written, str) else go_format(written)
    return f" (the chart reads {shown} as true)"


def _model_generation(ctx: RuleContext, model: str) -> str | None:
    """mdev | sriov for a host.gpuModel such as "A100", "NVIDIA L40S" or "l4"; None when unknown."""
    name = re.sub(r"^NVIDIA\s+", "", model.strip(), flags=re.I).replace(" ", "").upper()
    for generation, models in ctx.data("gpu/facts.yaml")["vgpuGenerations"].items():
        if name in models:
            return generation
    return None


@rule(
    "GPU-13", WARNING,
    "vgpu-device-manager crashloops on SR-IOV GPUs",
    """
    vGPU comes in two generations. Pascal/Volta/Turing/Ampere (V100, T4, A100, A30, A40, A10) use
    mediated devices created by the vGPU Device Manager: set gpu.vgpuDeviceManager.enabled: true.
    Ada Lovelace/Blackwell (L4, L40, L40S, B100) use SR-IOV virtual functions: there is no
    /sys/class/mdev_bus, the device manager crashloops ("no parent devices found"), and the VFs are
    listed in gpu.permittedHostDevices.pciHostDevices. Decided from host.gpuModel; skipped when the
    model is not set or not one of those named above. `enabled` is read as the chart reads it (Go
    template truthiness): any non-empty value, "no" and "false" included, forwards
    vgpuDeviceManager.enabled: true.
    """,
    [f"{SRC_C}packages/system/gpu-operator/values.yaml", f"{SRC_C}packages/system/gpu-operator/values-vgpu.yaml",
     SRC_VGPU_DOC],
)
def gpu_13(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    model = v.overlay.get("host", "gpuModel")
    if not (v.bundle and v.facts.gpu_operator_variant == "vgpu") or not isinstance(model, str):
        return
    # iaas.yaml forwards vgpuDeviceManager.enabled: true whenever the value is Go-truthy (`if
    # (((.Values.gpu).vgpuDeviceManager).enabled)`): "no", "false" and 1 turn the device manager on too.
    if go_truthy(v.knob("vgpuDeviceManager", "enabled")) and _model_generation(ctx, model) == "sriov":
        read_as = _read_as_true(v.knob("vgpuDeviceManager", "enabled"))
        yield Hit(f"vgpu-device-manager crashloops on SR-IOV GPUs ({model}: no /sys/class/mdev_bus); keep it off "
                  f"and list VFs in gpu.permittedHostDevices.pciHostDevices.{read_as}",
                  **v.knob_at("vgpuDeviceManager", "enabled"))


@rule(
    "GPU-14", ERROR,
    "No permittedHostDevices will be rendered; every GPU VM will be rejected",
    """
    The platform builds cozystack.kubevirt permittedHostDevices from its default tables plus the user's
    gpu.permittedHostDevices; an empty result leaves the key out and KubeVirt admission rejects every
    GPU VM. default (passthrough): empty only when gpu.replaceDefaults: true and no
    pciHostDevices are given (mediatedDevices are ignored in passthrough) — error. vgpu: there is no
    pci table, and the mdev table is added only with gpu.vgpuDeviceManager.enabled: true and
    replaceDefaults false, so without user pciHostDevices/mediatedDevices this is the out-of-the-box
    state — warning: list the SR-IOV VFs, or turn the device manager on for mdev GPUs.
    replaceDefaults and vgpuDeviceManager.enabled are read as the chart reads them (Go template
    truthiness: `1`, "no" and "false" are true; 0, "" and null are false).
    """,
    [SRC_GPU_DOC, SRC_VGPU_DOC, f"{SRC_IAAS} L82-119"],
)
def gpu_14(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if not v.bundle:
        return
    message = "No permittedHostDevices will be rendered; every GPU VM will be rejected."
    # `$replace := default false (.Values.gpu).replaceDefaults` then `if not $replace`: Go truthiness,
    # so 1, "no" and "false" drop the defaults as true does.
    replace = go_truthy(v.knob("replaceDefaults"))
    pci = v.knob("permittedHostDevices", "pciHostDevices")
    mdev = v.knob("permittedHostDevices", "mediatedDevices")
    if v.facts.gpu_operator_variant == "default":
        if replace and not pci:
            read_as = _read_as_true(v.knob("replaceDefaults"))
            yield Hit(f"{message} (gpu.replaceDefaults: true{read_as} drops the NVIDIA table and no pciHostDevices are "
                      "listed)", **v.knob_at("replaceDefaults"))
    elif v.facts.gpu_operator_variant == "vgpu" and not pci and not mdev and \
            (replace or not go_truthy(v.knob("vgpuDeviceManager", "enabled"))):
        yield Hit(f"{message} (vgpu: list SR-IOV VFs in gpu.permittedHostDevices.pciHostDevices, or set "
                  "gpu.vgpuDeviceManager.enabled: true for mdev GPUs)", severity=WARNING, **v.chosen_at())


@rule(
    "GPU-15", WARNING,
    "Duplicate pciVendorSelector with the platform's NVIDIA default table",
    """
    In the default variant the platform appends gpu.permittedHostDevices.pciHostDevices after its own
    NVIDIA table (files/gpu-passthrough-defaults.yaml) unless gpu.replaceDefaults is true. A selector
    already in that table then appears twice, and KubeVirt resolves the duplicate
    non-deterministically. To re-point a default device at another resource name, set
    replaceDefaults: true and list every device you want. (The docs' own "Extending" example,
    10DE:2236, is such a duplicate.)
    """,
    [SRC_GPU_DOC, f"{SRC_C}packages/core/platform/files/gpu-passthrough-defaults.yaml"],
)
def gpu_15(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if not (v.bundle and v.facts.gpu_operator_variant == "default") or go_truthy(v.knob("replaceDefaults")):
        return
    defaults = {d["pciVendorSelector"].upper(): d["resourceName"]
                for d in ctx.data("gpu/facts.yaml")["passthroughDefaults"]}
    pci = v.knob("permittedHostDevices", "pciHostDevices")
    for i, entry in enumerate(pci if isinstance(pci, list) else []):
        selector = entry.get("pciVendorSelector") if isinstance(entry, dict) else None
        if isinstance(selector, str) and selector.upper() in defaults:
            yield Hit(f"Duplicate pciVendorSelector {selector} (already {defaults[selector.upper()]} in the "
                      "platform defaults); KubeVirt resolves it non-deterministically. Use replaceDefaults: true "
                      "to re-point it.",
                      **v.knob_at("permittedHostDevices", "pciHostDevices", i, "pciVendorSelector"))


@rule(
    "GPU-16", WARNING,
    "vGPU-only keys are ignored in passthrough",
    """
    templates/bundles/iaas.yaml reads gpu.permittedHostDevices.mediatedDevices and
    gpu.mediatedDevicesConfiguration only for the vgpu variant; in default (passthrough) they are
    dropped without a trace. Empty values ([] / {}) are no-ops and not reported.
    """,
    [SRC_IAAS, f"{SRC_C}packages/core/platform/tests/bundles_gpu_kubevirt_wiring_test.yaml "
     '("ignores user gpu.mediatedDevices…")'],
)
def gpu_16(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if not (v.bundle and v.facts.gpu_operator_variant == "default"):
        return
    for path in (("permittedHostDevices", "mediatedDevices"), ("mediatedDevicesConfiguration",)):
        if _nonempty(v.knob(*path)):
            yield Hit(f"vGPU-only keys are ignored in passthrough (gpu.{'.'.join(path)}).", **v.knob_at(*path))


@rule(
    "GPU-17", WARNING,
    "gpu.* values are only forwarded when cozystack.gpu-operator is bundle-enabled",
    """
    The platform reads the gpu.* platform values only while it renders cozystack.gpu-operator from the
    iaas bundle, and gpu.vgpuManager / gpu.vgpuDeviceManager only for the vgpu variant. Anywhere else —
    gpu.variant none or container (standalone Package), or a platform that does not render the bundle —
    they have no effect. gpu.values likewise has no effect with gpu.variant none.
    """,
    [SRC_IAAS],
)
def gpu_17(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    message = ("gpu.* values are only forwarded when cozystack.gpu-operator is bundle-enabled "
               "(vgpuManager only for vgpu)")
    if v.bundle:
        if v.facts.gpu_operator_variant == "default":
            for key in v.knob_keys():
                if key in VGPU_ONLY_KNOBS:
                    yield Hit(f"{message}: gpu.{key} is ignored with variant default.", **v.knob_at(key))
        return
    for key in v.knob_keys():
        yield Hit(f"{message}: gpu.{key} has no effect here.", **v.knob_at(key))
    if v.overlay.get("gpu", "values") is not None and (v.overlay.get("gpu", "variant") or "none") == "none":
        yield Hit("gpu.variant is none: gpu.values has no effect (nothing GPU-related is rendered).",
                  overlay_path=("gpu", "values"))


def _kubevirt_wired(kubevirt: Emitted | None) -> bool:
    values = dig(kubevirt.obj, "spec", "components", "kubevirt", "values") if kubevirt else None
    gates = dig(values, "extraFeatureGates")
    return isinstance(gates, list) and "HostDevices" in gates and isinstance(dig(values, "permittedHostDevices"), dict)


@rule(
    "GPU-18", WARNING,
    "Manual gpu-operator path: KubeVirt is not wired automatically",
    """
    Only the bundle route makes the platform add extraFeatureGates: [HostDevices] and
    permittedHostDevices to cozystack.kubevirt. A hand-written default (passthrough) or vgpu Package
    leaves KubeVirt unwired, so VMs cannot request the GPUs; write cozystack.kubevirt with
    components.kubevirt.values.extraFeatureGates [HostDevices] and permittedHostDevices as well (the
    docs' "Manual Package-CR override path"). On iaas clusters that Package is also rendered by the
    platform: keep variant: default and the platform's cpuAllocationRatio (PLT-11). Not reported for
    the Talos native overlay, which serves pods, not VMs.
    """,
    [f"{SRC_GPU_DOC} / {SRC_VGPU_DOC} (Manual Package-CR override path)"],
)
def gpu_18(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.standalone is None or v.bundle or v.serves_pods or v.variant not in ("default", "vgpu"):
        return
    if not _kubevirt_wired(v.package(KUBEVIRT)):
        yield Hit("Manual gpu-operator path: KubeVirt is not wired automatically (add cozystack.kubevirt with "
                  "extraFeatureGates: [HostDevices] and permittedHostDevices).", v.standalone, ("spec", "variant"))


_LICENSING = ("spec", "components", "gpu-operator", "values", "gpu-operator", "driver", "licensingConfig")


@rule(
    "GPU-19", WARNING,
    "SR-IOV vGPU licensing is consumed in the guest",
    """
    With vGPU 17/20 (DLS) the host does not license: the guest VM gets
    /etc/nvidia/ClientConfigToken/client_configuration_token.tok (0744) and /etc/nvidia/gridd.conf with
    FeatureType=1 through cloud-init, and `nvidia-smi -q | grep 'License Status'` in the guest verifies
    it. driver.licensingConfig.secretName on the host operator is the passthrough host-licensing
    mechanism and must not carry the vGPU token. Deliver the token per VM, never as a host Secret.
    """,
    [f"{SRC_VGPU_DOC} (Licensing)"],
)
def gpu_19(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if v.variant == "vgpu" and dig(v.operator_values, "driver", "licensingConfig", "secretName") is not None:
        yield Hit("SR-IOV vGPU licensing is consumed in the guest; deliver the DLS token via cloud-init.",
                  v.standalone, _LICENSING + ("secretName",))


@rule(
    "GPU-20", WARNING,
    "driver.licensingConfig.configMapName is deprecated",
    """
    gpu-operator chart v26 (vendored by Cozystack) deprecates driver.licensingConfig.configMapName in
    favour of secretName (the licence token is a secret). Migrating from chart v25.x means moving the
    token into a Secret and naming it in secretName.
    """,
    [f"{SRC_VGPU_DOC} (Migrating from chart v25.x)"],
)
def gpu_20(ctx: RuleContext) -> Iterator[Hit]:
    v = gpu_view(ctx)
    if dig(v.operator_values, "driver", "licensingConfig", "configMapName") is not None:
        yield Hit("configMapName is deprecated; use secretName.", v.standalone, _LICENSING + ("configMapName",))


_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E)?\s*$")
_FACTOR = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
MIN_GPU_GUEST_MEMORY = 4 * 2**30


def memory_bytes(quantity: Any) -> float | None:
    """A Kubernetes memory quantity ("4Gi", "4096Mi", "2G", 2147483648) in bytes; None if unparsable."""
    if isinstance(quantity, bool):
        return None
    if isinstance(quantity, (int, float)):
        return float(quantity)
    if not isinstance(quantity, str):
        return None
    match = _QUANTITY.match(quantity)
    if not match:
        return None
    return float(match.group(1)) * _FACTOR[match.group(2)]


@rule(
    "GPU-21", WARNING,
    "NVIDIA driver requires at least 4 GiB guest RAM",
    """
    A vm-instance (apps.cozystack.io/v1alpha1 VMInstance) that requests gpus needs at least 4 GiB of
    guest memory for the NVIDIA guest driver. Decided only when spec.resources.memory is set on a
    VMInstance in the render (manifests:); the memory behind an instanceType is not known to the
    renderer, so those VMs are skipped.
    """,
    [f"{SRC_C}packages/apps/vm-instance/values.yaml (gpus)"],
)
def gpu_21(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.objects:
        if e.api_version != APPS_API or e.kind != "VMInstance" or not dig(e.obj, "spec", "gpus"):
            continue
        memory = dig(e.obj, "spec", "resources", "memory")
        size = memory_bytes(memory)
        if size is not None and size < MIN_GPU_GUEST_MEMORY:
            yield Hit(f"NVIDIA driver requires at least 4 GiB RAM ({e.ref()} has {memory}).",
                      e, ("spec", "resources", "memory"))
