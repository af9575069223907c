"""One small unit per documented failure. Each takes the route and the live state and yields
``Diagnosis`` values naming the code, the node and the object; ``diagnose`` runs the units the route
needs, in order, and a pod one unit explained is not reported again by the generic pod check.

The signatures (pod names, container names, labels, log lines) are the documentation's own; see
``renderer.doctor.codes`` for the sources.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from renderer.doctor.codes import CODES
from renderer.doctor.live import LiveState
from renderer.doctor.route import (
    COMPAT_DAEMONSET,
    CONTAINER,
    NAMESPACE,
    NONE,
    OPERATOR_DEPLOYMENT,
    PASSTHROUGH,
    POD_ROUTES,
    TALOS_NATIVE,
    VGPU,
    VM_ROUTES,
    Route,
    expected_daemonsets,
)
from renderer.model import GPU_OPERATOR, HAMI, PLATFORM_PACKAGE

Obj = dict[str, Any]
SEVERITY = {c.id: c.severity for c in CODES}

# Node labels (gpu-operator: NFD's PCI vendor label, and the operator's own once it saw it).
GPU_PRESENT = "nvidia.com/gpu.present"
NFD_NVIDIA = "feature.node.kubernetes.io/pci-10de.present"
WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"
DEPLOY_DRIVER_LABEL = "nvidia.com/gpu.deploy.driver"
GPU_RESOURCE = "nvidia.com/gpu"
RUNTIME_CLASS = "nvidia"  # chart default operator.runtimeClass

# Pod name prefixes: the troubleshooting page deletes "by name pattern" because the DaemonSet labels
# are operator-managed and not stable across versions.
VFIO_MANAGER = "nvidia-vfio-manager-"
SANDBOX_VALIDATOR = "nvidia-sandbox-validator-"
OPERATOR_VALIDATOR = "nvidia-operator-validator-"
CUDA_VALIDATOR = "nvidia-cuda-validator-"
VGPU_DEVICE_MANAGER = "nvidia-vgpu-device-manager-"
VGPU_MANAGER_APP = "nvidia-vgpu-manager-daemonset"  # reference (c): vgpu pods labelled app=...
COMPAT_POD = COMPAT_DAEMONSET + "-"
PINNED_OFF = ("nvidia-driver-daemonset", "nvidia-container-toolkit-daemonset", "nvidia-vfio-manager")
DRIVER_MANAGER_INIT = "k8s-driver-manager"

# Log lines and messages, as the components print them.
HOST_DRIVER_LOG = "Host driver detected"
NOT_BOUND_LOG = "device not bound to 'vfio-pci'"
NO_PARENT_LOG = "no parent devices found"
NO_RUNTIME_EVENT = 'no runtime for "nvidia" is configured'
PULL_SECRET_EVENT = "FailedToRetrieveImagePullSecret"
PULL_REASONS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
DRIVER_RETRY_LOG = "command failed, retrying after 5 seconds"


class Diagnosis(NamedTuple):
    code: str
    message: str
    node: str | None = None
    obj: str | None = None  # kind/namespace/name
    notes: tuple[str, ...] = ()  # what could not be read for it (a log), and how it was decided instead

    @property
    def severity(self) -> str:
        return SEVERITY[self.code]


class Context:
    """The state plus what units have explained so far (pods, nodes per code)."""

    def __init__(self, route: Route, state: LiveState) -> None:
        self.route = route
        self.state = state
        self.claimed: set[str] = set()  # pod names a unit explained
        self.nodes_with: dict[str, set[str]] = {}  # code -> nodes it was reported for
        self.operator_missing = False  # the operator is not installed: operand findings would be victims
        self.folded: dict[tuple[str, str], list[str]] = {}  # (cause code, node) -> what its victims showed

    def fold(self, cause: str, node: str, consequence: str) -> None:
        """A victim is said in its cause's finding, never as a finding of its own (issue 32 item 5)."""
        self.folded.setdefault((cause, node), []).append(consequence)

    def claim(self, *pods: Obj) -> None:
        self.claimed.update(_name(p) for p in pods)

    def noted(self, code: str, node: str | None) -> None:
        if node:
            self.nodes_with.setdefault(code, set()).add(node)

    def reported(self, code: str, node: str) -> bool:
        return node in self.nodes_with.get(code, set())


# --- reading pods and nodes ----------------------------------------------------------------------


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _labels(obj: Obj) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})  # shape-checked: str -> str (shape.py)


def node_of(pod: Obj) -> str | None:
    node = (pod.get("spec") or {}).get("nodeName")
    return str(node) if node else None


def pods_named(state: LiveState, prefix: str, node: str | None = None) -> list[Obj]:
    """Operator-namespace pods by name prefix, on ``node`` through the node index (no pods x nodes scan)."""
    pods = state.pods if node is None else state.pods_by_node.get(node, [])
    return [p for p in pods if _name(p).startswith(prefix)]


def statuses(pod: Obj, init: bool) -> list[Obj]:
    status = pod.get("status") or {}
    return list(status.get("initContainerStatuses" if init else "containerStatuses") or [])


def _failing(cs: Obj) -> str | None:
    """The container's failure as kubectl shows it (CrashLoopBackOff, Error, ImagePullBackOff...), or None."""
    state = cs.get("state") or {}
    waiting = state.get("waiting")
    if isinstance(waiting, dict) and waiting.get("reason") not in (None, "PodInitializing", "ContainerCreating"):
        return str(waiting["reason"])
    terminated = state.get("terminated")
    if isinstance(terminated, dict) and terminated.get("exitCode", 0) != 0:
        return str(terminated.get("reason") or "Error")
    return None


def pod_status(pod: Obj) -> str:
    """The STATUS column of ``kubectl get pods``: Init:<reason>, Init:n/m, a waiting reason, the phase."""
    inits = statuses(pod, True)
    for i, cs in enumerate(inits):
        failing = _failing(cs)
        if failing is not None:
            return f"Init:{failing}"
        terminated = (cs.get("state") or {}).get("terminated")
        if not (isinstance(terminated, dict) and terminated.get("exitCode", 1) == 0):
            return f"Init:{i}/{len(inits)}"
    for cs in statuses(pod, False):
        failing = _failing(cs)
        if failing is not None:
            return failing
    return str((pod.get("status") or {}).get("phase") or "Unknown")


def pod_healthy(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return True
    if phase != "Running":
        return False
    return all(cs.get("ready") is True for cs in statuses(pod, False))


def log_of(state: LiveState, pod: Obj, container: str) -> str:
    """The current log, and the previous instance's for a restarted container (the one that failed)."""
    current = state.log(pod, container)
    restarted = any(cs.get("name") == container and (cs.get("restartCount") or 0) > 0
                    for cs in statuses(pod, True) + statuses(pod, False))
    return current + ("\n" + state.log(pod, container, previous=True) if restarted else "")


_LOGRUS_MSG = re.compile(r'(?:^|\s)msg=(?:"((?:[^"\\]|\\.)*)"|(\S+))')
_LOGRUS_LINE = re.compile(r'^(?:time="[^"]*"\s+)?level=\w+\s')


def message_of(line: str) -> str:
    """A log line as quoted in a finding: the message only. A logrus line (the operator's components
    print ``time="..." level=info msg="..."``) gives its ``msg`` value, unescaped; a plain line is kept."""
    line = line.strip()
    if not _LOGRUS_LINE.match(line):
        return line
    found = _LOGRUS_MSG.search(line)
    if found is None:
        return line
    if found.group(1) is not None:
        return re.sub(r"\\(.)", r"\1", found.group(1)).strip()
    return found.group(2)


def logged(state: LiveState, pod: Obj, needle: str) -> tuple[str, str] | None:
    """(container, the message of the first log line holding ``needle``) across the pod's containers, or None."""
    for cs in statuses(pod, True) + statuses(pod, False):
        container = str(cs.get("name"))
        for line in log_of(state, pod, container).splitlines():
            if needle in line:
                return container, message_of(line)
    return None


def last_line(state: LiveState, pod: Obj, container: str) -> str:
    lines = [message_of(line) for line in log_of(state, pod, container).splitlines() if line.strip()]
    return lines[-1] if lines else ""


def gpu_nodes(state: LiveState) -> list[Obj]:
    return [n for n in state.nodes if _labels(n).get(GPU_PRESENT) == "true" or _labels(n).get(NFD_NVIDIA) == "true"]


def allocatable(node: Obj) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((node.get("status") or {}).get("allocatable") or {}).items()}


def _quantity(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


def events_for(state: LiveState, name: str) -> list[Obj]:
    return state.events_by_object.get(name, [])


def _ref(kind: str, obj: Obj, namespace: str | None = NAMESPACE) -> str:
    ns = (obj.get("metadata") or {}).get("namespace") or namespace
    return f"{kind}/{ns}/{_name(obj)}" if ns else f"{kind}/{_name(obj)}"


# --- any route: Packages --------------------------------------------------------------------------


def _ready(package: Obj) -> Obj | None:
    for condition in (package.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return dict(condition)
    return None


MAX_CHAIN = 64  # Packages followed along DependenciesNotReady (the platform has a few dozen)


def _chain_root(packages: dict[str, Obj], name: str) -> tuple[tuple[str, ...], str]:
    """(the path from ``name`` down to the root cause, the root's state) along DependenciesNotReady.
    Iterative and bounded (issue 34 item 15): a chain of thousands of Packages, or a loop, costs no
    stack and at most MAX_CHAIN steps."""
    path: tuple[str, ...] = ()
    while True:
        path = (*path, name)
        package = packages.get(name)
        if package is None:
            return path, "absent"
        ready = _ready(package)
        if ready is None:
            return path, "has no Ready condition yet (not reconciled)"
        if ready.get("status") == "True":
            return path, "Ready"
        following = None
        if ready.get("reason") == "DependenciesNotReady":
            deps = (package.get("status") or {}).get("dependencies") or {}
            following = next((dep for dep, dep_state in sorted(deps.items()) if dep not in path
                              and not (isinstance(dep_state, dict) and dep_state.get("ready") is True)), None)
        if following is None:
            message = f": {ready['message']}" if ready.get("message") else ""
            return path, f"Ready=False {ready.get('reason') or ''}{message}".rstrip()
        if len(path) >= MAX_CHAIN:
            return path, f"DependenciesNotReady (the chain is longer than {MAX_CHAIN} Packages; not followed further)"
        name = following


def check_packages(ctx: Context) -> Iterator[Diagnosis]:
    packages = ctx.state.packages
    for name in ctx.route.packages:
        path, state = _chain_root(packages, name)
        live = packages.get(name)
        if name == GPU_OPERATOR and live is not None and ctx.route.variant is not None:
            variant = ((live.get("spec") or {}).get("variant")) or "default"  # empty: the controller's default
            if variant != ctx.route.variant:
                yield Diagnosis("DOC-PACKAGE", f"Package {name} has variant {variant} on the cluster, the render says "
                                f"{ctx.route.variant}: the render is not synced (cozy-render diff)",
                                obj=f"Package/{name}")
        if state == "Ready":
            continue
        if len(path) == 1 and state == "absent":
            where = ""
            if ctx.route.origin.startswith("bundle"):
                _, platform = _chain_root(packages, PLATFORM_PACKAGE)
                where = f"; the platform renders it, and {PLATFORM_PACKAGE} is {platform}"
            yield Diagnosis("DOC-PACKAGE", f"Package {name} is not on the cluster (the render is not synced"
                            f"{' or the platform has not rendered it' if where else ''}){where}",
                            obj=f"Package/{name}")
            continue
        if len(path) == 1:
            yield Diagnosis("DOC-PACKAGE", f"Package {name} is {state}", obj=f"Package/{name}")
            continue
        yield Diagnosis("DOC-PACKAGE", f"Package {name} is DependenciesNotReady: root {path[-1]} is {state} "
                        f"(chain {' -> '.join(path)})", obj=f"Package/{path[-1]}")


# --- any route: the operator and the objects the route's documentation lists ---------------------


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _package_explains_operator(ctx: Context) -> bool:
    """The gpu-operator Package is absent or not Ready: DOC-PACKAGE already names why nothing runs."""
    _, state = _chain_root(ctx.state.packages, GPU_OPERATOR)
    return state != "Ready"


def check_operator(ctx: Context) -> Iterator[Diagnosis]:
    """The operator Deployment and its ClusterPolicy. Neither on the cluster: the operator is not
    installed (or its release was never reconciled); every operand finding would be its victim."""
    state = ctx.state
    deployment = next((d for d in state.deployments if _name(d) == OPERATOR_DEPLOYMENT), None)
    ref = f"Deployment/{NAMESPACE}/{OPERATOR_DEPLOYMENT}"
    if deployment is None and not state.cluster_policies:
        ctx.operator_missing = True
        if _package_explains_operator(ctx):
            return  # one cause, one finding: DOC-PACKAGE
        pods = len(state.pods)
        yield Diagnosis("DOC-OPERATOR", f"the gpu-operator is not installed or not reconciled: no Deployment "
                        f"{NAMESPACE}/{OPERATOR_DEPLOYMENT}, no ClusterPolicy, {pods} pod{'s' * (pods != 1)} in "
                        f"{NAMESPACE}, though Package {GPU_OPERATOR} is Ready: check its HelmRelease "
                        f"(kubectl get hr -n {NAMESPACE})", obj=ref)
        return
    if deployment is None:
        yield Diagnosis("DOC-OPERATOR", f"Deployment {NAMESPACE}/{OPERATOR_DEPLOYMENT} is not on the cluster "
                        "(the ClusterPolicy is left without its operator)", obj=ref)
        return
    wanted = _int((deployment.get("spec") or {}).get("replicas", 1)) if "replicas" in (deployment.get("spec") or {}) \
        else 1
    ready = _int((deployment.get("status") or {}).get("readyReplicas"))
    if ready < max(wanted, 1):
        operator_pods = pods_named(state, OPERATOR_DEPLOYMENT + "-")
        ctx.claim(*operator_pods)
        shown = "; ".join(f"{_name(p)} is {pod_status(p)}" for p in operator_pods) or "no pod"
        node = node_of(operator_pods[0]) if operator_pods else None
        yield Diagnosis("DOC-OPERATOR", f"Deployment {NAMESPACE}/{OPERATOR_DEPLOYMENT} has {ready}/{max(wanted, 1)} "
                        f"ready replicas ({shown})", node=node, obj=ref)


def check_daemonsets(ctx: Context) -> Iterator[Diagnosis]:
    """Each operand DaemonSet the route lists: on the cluster, scheduled on the GPU nodes, all ready.
    A DaemonSet whose unready pod another unit (or DOC-POD) names is left to that finding."""
    if ctx.operator_missing:
        return
    state = ctx.state
    gpu = sorted(_name(n) for n in gpu_nodes(state))
    for name in expected_daemonsets(ctx.route):
        ref = f"DaemonSet/{NAMESPACE}/{name}"
        ds = next((d for d in state.daemonsets if _name(d) == name), None)
        if ds is None:
            for node in gpu:
                ctx.noted("DOC-DAEMONSET", node)
            yield Diagnosis("DOC-DAEMONSET", f"DaemonSet {NAMESPACE}/{name} is not on the cluster (deleted, or "
                            "not created by the operator: is it disabled in the ClusterPolicy?)", obj=ref)
            continue
        status = ds.get("status") or {}
        desired, ready = _int(status.get("desiredNumberScheduled")), _int(status.get("numberReady"))
        if desired == 0 and gpu:
            for node in gpu:
                ctx.noted("DOC-DAEMONSET", node)
            yield Diagnosis("DOC-DAEMONSET", f"DaemonSet {NAMESPACE}/{name} is scheduled on no node (desired 0) "
                            f"though {len(gpu)} GPU node{'s' * (len(gpu) != 1)} ({', '.join(gpu[:5])}"
                            f"{', ...' if len(gpu) > 5 else ''}): check its nodeSelector against the nodes' "
                            "nvidia.com/gpu.deploy.* and nvidia.com/gpu.workload.config labels", obj=ref)
            continue
        if ready >= desired:
            continue
        pods = pods_named(state, name + "-")
        if any(not pod_healthy(p) for p in pods):
            continue  # the unready pod is named by its own finding
        covered = {node_of(p) for p in pods}
        missing = [n for n in gpu if n not in covered]
        for node in missing:
            ctx.noted("DOC-DAEMONSET", node)
        where = f"; no pod on {', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}" if missing else ""
        yield Diagnosis("DOC-DAEMONSET", f"DaemonSet {NAMESPACE}/{name} has {ready}/{desired} pods ready{where}",
                        node=missing[0] if missing else None, obj=ref)


def check_cluster_policy(ctx: Context, found: list[Diagnosis]) -> Iterator[Diagnosis]:
    """ClusterPolicy status.state must be ready. Run last: a policy not ready because an operand
    fails is that operand's finding; this one only speaks when nothing else explains it."""
    if ctx.operator_missing or any(d.severity == "error" for d in found):
        return
    policies = ctx.state.cluster_policies
    if not policies:
        yield Diagnosis("DOC-CLUSTERPOLICY", f"no ClusterPolicy on the cluster: the operator in {NAMESPACE} "
                        "creates none by itself; the Package's release renders it (kubectl get clusterpolicies)",
                        obj="ClusterPolicy")
        return
    for policy in policies:
        state = (policy.get("status") or {}).get("state")
        if state != "ready":
            yield Diagnosis("DOC-CLUSTERPOLICY", f"ClusterPolicy {_name(policy)} has status.state "
                            f"{state if state else 'unset'}, not ready", obj=f"ClusterPolicy/{_name(policy)}")


def check_shape(ctx: Context) -> Iterator[Diagnosis]:
    """One finding per live object with fields of the wrong type (read as absent: shape.py)."""
    for ref, problems in ctx.state.shapeless:
        node = ref.split("/", 1)[1] if ref.startswith("Node/") else None
        yield Diagnosis("DOC-SHAPE", f"{ref} does not have the shape Kubernetes gives it: {'; '.join(problems[:5])}"
                        f"{f' (and {len(problems) - 5} more)' if len(problems) > 5 else ''}; those fields were "
                        "read as absent", node=node, obj=ref)


# --- passthrough ---------------------------------------------------------------------------------


def check_host_driver(ctx: Context) -> Iterator[Diagnosis]:
    state = ctx.state
    nodes = {_name(n): n for n in state.nodes}
    candidates = {node_of(p) for p in pods_named(state, VFIO_MANAGER)}
    candidates |= {n for n, node in nodes.items() if _labels(node).get(DEPLOY_DRIVER_LABEL) == "pre-installed"}
    for node in sorted(n for n in candidates if n):
        evidence: list[str] = []
        claimed: list[Obj] = []
        for pod in pods_named(state, VFIO_MANAGER, node):
            status = pod_status(pod)
            line = logged(state, pod, HOST_DRIVER_LOG)
            if line is not None or (status.startswith("Init:") and not status[5:6].isdigit()):
                evidence.append(f"{_name(pod)} is {status}" + (f", {line[0]} logged \"{line[1]}\"" if line else ""))
                claimed.append(pod)
        labelled = _labels(nodes.get(node, {})).get(DEPLOY_DRIVER_LABEL) == "pre-installed"
        if not any(HOST_DRIVER_LOG in e for e in evidence) and not (labelled and evidence):
            continue  # a crashing vfio-manager without the signature is DOC-POD's; the label alone is DOC-DRIVER-LABEL
        if labelled:
            evidence.append(f"node labelled {DEPLOY_DRIVER_LABEL}=pre-installed")
        for pod in pods_named(state, SANDBOX_VALIDATOR, node):
            line = logged(state, pod, NOT_BOUND_LOG)
            if line is not None:
                evidence.append(f"{_name(pod)}: \"{line[1]}\"")
                claimed.append(pod)
            elif not pod_healthy(pod):  # its log unread: still the host driver's victim on this node
                evidence.append(f"{_name(pod)} is {pod_status(pod)}")
                claimed.append(pod)
        ctx.claim(*claimed)
        ctx.noted("DOC-HOST-DRIVER", node)
        yield Diagnosis("DOC-HOST-DRIVER", f"passthrough cannot bind vfio-pci while the host NVIDIA driver is loaded: "
                        f"{'; '.join(evidence)}. Purge the host driver (rules DOC-HOST-DRIVER) or use the "
                        "container variant", node=node, obj=_ref("Pod", claimed[0]) if claimed else f"Node/{node}")


def check_vfio_unbound(ctx: Context) -> Iterator[Diagnosis]:
    for pod in pods_named(ctx.state, SANDBOX_VALIDATOR):
        node = node_of(pod)
        if _name(pod) in ctx.claimed or (node and ctx.reported("DOC-HOST-DRIVER", node)):
            continue
        line = logged(ctx.state, pod, NOT_BOUND_LOG)
        if line is None:
            continue
        ctx.claim(pod)
        ctx.noted("DOC-VFIO-UNBOUND", node)
        yield Diagnosis("DOC-VFIO-UNBOUND", f"{_name(pod)} ({pod_status(pod)}) {line[0]}: \"{line[1]}\"; no host "
                        "driver was detected: check lspci -nnk -d 10de: and delete the stuck pods", node=node,
                        obj=_ref("Pod", pod))


def check_driver_label(ctx: Context) -> Iterator[Diagnosis]:
    for node in ctx.state.nodes:
        name = _name(node)
        if _labels(node).get(DEPLOY_DRIVER_LABEL) == "pre-installed" and not ctx.reported("DOC-HOST-DRIVER", name):
            yield Diagnosis("DOC-DRIVER-LABEL", f"{DEPLOY_DRIVER_LABEL}=pre-installed is left on the node (never "
                            f"reset automatically): kubectl label node {name} {DEPLOY_DRIVER_LABEL}-", node=name,
                            obj=f"Node/{name}")


EXPLAINS_NO_DEVICES = ("DOC-HOST-DRIVER", "DOC-VFIO-UNBOUND", "DOC-VGPU-DEVICE-MANAGER", "DOC-VGPU-IMAGE",
                       "DOC-PULL-SECRET", "DOC-DAEMONSET")


def check_vm_devices(ctx: Context) -> Iterator[Diagnosis]:
    if ctx.operator_missing:
        return  # nothing could register them: DOC-OPERATOR (or DOC-PACKAGE) is the cause
    for node in gpu_nodes(ctx.state):
        name = _name(node)
        if any(ctx.reported(code, name) for code in EXPLAINS_NO_DEVICES):
            continue  # already explained: the root cause is reported for this node
        registered = {k: v for k, v in allocatable(node).items() if k.startswith("nvidia.com/") and _quantity(v) > 0}
        if not registered:
            hint = (" (SR-IOV vGPU: is current_vgpu_type set on each VF since the last reboot?)"
                    if ctx.route.name == VGPU else "")
            yield Diagnosis("DOC-NO-DEVICES", f"node {name} has a GPU but no allocatable nvidia.com/ resource{hint}",
                            node=name, obj=f"Node/{name}")


# --- container and Talos native ------------------------------------------------------------------


def check_workload_label(ctx: Context) -> Iterator[Diagnosis]:
    for node in ctx.state.nodes:
        value = _labels(node).get(WORKLOAD_LABEL)
        if value is not None and value != "container":
            name = _name(node)
            ctx.noted("DOC-WORKLOAD-LABEL", name)
            yield Diagnosis("DOC-WORKLOAD-LABEL", f"{WORKLOAD_LABEL}={value} on node {name}: the device plugin will "
                            f"not serve it; kubectl label node {name} {WORKLOAD_LABEL}-", node=name, obj=f"Node/{name}")


def check_runtime_class(ctx: Context) -> Iterator[Diagnosis]:
    if ctx.operator_missing:
        return  # the operator creates the RuntimeClass: not installed is the cause, not the runtime
    if not any(_name(rc) == RUNTIME_CLASS for rc in ctx.state.runtime_classes):
        policies = ctx.state.cluster_policies
        state = ((policies[0].get("status") or {}).get("state") or "unset") if policies else None
        reconciled = (f"its ClusterPolicy is {state}" if policies else "there is no ClusterPolicy")
        yield Diagnosis("DOC-RUNTIMECLASS", f"no RuntimeClass {RUNTIME_CLASS}: the operator creates it when it "
                        f"reconciles its ClusterPolicy, and {reconciled}; until then the operand pods "
                        f"(runtimeClassName: {RUNTIME_CLASS}) cannot start", obj=f"RuntimeClass/{RUNTIME_CLASS}")


def check_runtime(ctx: Context) -> Iterator[Diagnosis]:
    if ctx.operator_missing:
        return
    pods = {_name(p): p for p in ctx.state.pods}
    by_node: dict[str, list[str]] = {}
    for event in ctx.state.events:
        if NO_RUNTIME_EVENT not in str(event.get("message") or ""):
            continue
        pod_name = str((event.get("involvedObject") or {}).get("name") or "")
        node = node_of(pods[pod_name]) if pod_name in pods else None
        node = node or str((event.get("source") or {}).get("host") or "") or "?"
        by_node.setdefault(node, []).append(pod_name)
        if pod_name in pods:
            ctx.claim(pods[pod_name])
    # Kubernetes 1.30+ nodes list the runtime handlers their container runtime offers
    # (node.status.runtimeHandlers): a GPU node that lists some but no nvidia has none to offer.
    handlers_of: dict[str, list[str]] = {}
    for node_obj in gpu_nodes(ctx.state):
        handlers = (node_obj.get("status") or {}).get("runtimeHandlers")
        if handlers:
            handlers_of[_name(node_obj)] = sorted(str(h.get("name") or "") for h in handlers)
    lacking = {n for n, names in handlers_of.items() if RUNTIME_CLASS not in names}
    for node in sorted(set(by_node) | lacking):
        ctx.noted("DOC-RUNTIME", node)
        said = []
        if node in lacking:
            said.append(f"the node's runtimeHandlers are {', '.join(h or '(default)' for h in handlers_of[node])}, "
                        "none nvidia")
        names = by_node.get(node, [])
        if names:
            said.append(f"{', '.join(sorted(set(names)))} failed with '{NO_RUNTIME_EVENT}'")
        yield Diagnosis("DOC-RUNTIME", f"containerd on node {node} has no nvidia runtime: {'; '.join(said)}; run "
                        "nvidia-ctk runtime configure --runtime=containerd and restart containerd", node=node,
                        obj=f"Pod/{NAMESPACE}/{sorted(names)[0]}" if names else f"Node/{node}")


def _stuck_init(pod: Obj) -> Obj | None:
    for cs in statuses(pod, True):
        terminated = (cs.get("state") or {}).get("terminated")
        if not (isinstance(terminated, dict) and terminated.get("exitCode", 1) == 0):
            return cs
    return None


def check_talos_compat(ctx: Context) -> Iterator[Diagnosis]:
    state = ctx.state
    ds = next((d for d in state.daemonsets if _name(d) == COMPAT_DAEMONSET), None)
    if ds is None:
        yield Diagnosis("DOC-TALOS-COMPAT", f"DaemonSet {NAMESPACE}/{COMPAT_DAEMONSET} is not on the cluster (the "
                        "render is not synced?)", obj=f"DaemonSet/{NAMESPACE}/{COMPAT_DAEMONSET}")
        for node in gpu_nodes(state):
            ctx.noted("DOC-TALOS-COMPAT", _name(node))
        return
    for node in gpu_nodes(state):
        name = _name(node)
        pods = pods_named(state, COMPAT_POD, name)
        if pods and all(pod_healthy(p) for p in pods):
            continue
        ctx.claim(*pods)
        ctx.noted("DOC-TALOS-COMPAT", name)
        if not pods:
            yield Diagnosis("DOC-TALOS-COMPAT", f"no {COMPAT_DAEMONSET} pod on GPU node {name}", node=name,
                            obj=f"DaemonSet/{NAMESPACE}/{COMPAT_DAEMONSET}")
            continue
        pod = pods[0]
        failing = [cs for cs in statuses(pod, True) + statuses(pod, False) if _failing(cs) or not cs.get("ready")]
        container = str(failing[0].get("name")) if failing else COMPAT_DAEMONSET
        line = last_line(state, pod, container)
        yield Diagnosis("DOC-TALOS-COMPAT", f"{_name(pod)} is {pod_status(pod)}" + (f", {container}: \"{line}\""
                        if line else ""), node=name, obj=_ref("Pod", pod))


def check_validator(ctx: Context) -> Iterator[Diagnosis]:
    state = ctx.state
    talos = ctx.route.name == TALOS_NATIVE
    if ctx.operator_missing:
        return
    for pod in pods_named(state, OPERATOR_VALIDATOR) + pods_named(state, CUDA_VALIDATOR):
        if pod_healthy(pod) or _name(pod) in ctx.claimed:
            continue
        node = node_of(pod)
        ctx.claim(pod)
        stuck = _stuck_init(pod)
        stage = str(stuck.get("name")) if stuck is not None else None
        if stage is None:
            failing = [cs for cs in statuses(pod, False) if not cs.get("ready")]
            stage = str(failing[0].get("name")) if failing else None
        line = last_line(state, pod, stage) if stage else ""
        said = f", {stage}: \"{line}\"" if line else (f" at {stage}" if stage else "")
        if talos and stage == "driver-validation" and node and ctx.reported("DOC-TALOS-COMPAT", node):
            ctx.fold("DOC-TALOS-COMPAT", node, f"so /run/nvidia/validations/.driver-ctr-ready was never written and "
                     f"{_name(pod)} waits at driver-validation ({pod_status(pod)})")
            continue
        if talos and stage == "driver-validation":
            ctx.noted("DOC-TALOS-MARKER", node)
            yield Diagnosis("DOC-TALOS-MARKER", f"{_name(pod)} is {pod_status(pod)}{said}: "
                            "/run/nvidia/validations/.driver-ctr-ready was never written on the node "
                            f"({COMPAT_DAEMONSET} has not finished)", node=node, obj=_ref("Pod", pod))
            continue
        if node and stage == "toolkit-validation" and ctx.reported("DOC-RUNTIME", node):
            continue
        if node and stage == "plugin-validation" and ctx.reported("DOC-WORKLOAD-LABEL", node):
            continue
        ctx.noted("DOC-VALIDATOR", node)
        yield Diagnosis("DOC-VALIDATOR", f"{_name(pod)} is {pod_status(pod)}{said}", node=node, obj=_ref("Pod", pod))


def check_gpu_allocatable(ctx: Context) -> Iterator[Diagnosis]:
    if ctx.operator_missing:
        return  # nothing could register nvidia.com/gpu: DOC-OPERATOR (or DOC-PACKAGE) is the cause
    for node in gpu_nodes(ctx.state):
        name = _name(node)
        if _quantity(allocatable(node).get(GPU_RESOURCE, "0")) > 0:
            continue
        causes = [c for c in ("DOC-WORKLOAD-LABEL", "DOC-RUNTIME", "DOC-TALOS-COMPAT", "DOC-TALOS-MARKER",
                              "DOC-VALIDATOR", "DOC-DAEMONSET") if ctx.reported(c, name)]
        if causes:
            ctx.fold(causes[0], name, f"so node {name} advertises no allocatable {GPU_RESOURCE}")
            continue
        yield Diagnosis("DOC-NO-GPU", f"node {name} is labelled {GPU_PRESENT}=true but has no allocatable "
                        f"{GPU_RESOURCE}", node=name, obj=f"Node/{name}")


def check_hami(ctx: Context) -> Iterator[Diagnosis]:
    if HAMI in ctx.state.packages:
        yield Diagnosis("DOC-HAMI-STACKED", f"Package {HAMI} is installed on the {ctx.route.name} route: "
                        "HAMi and the NVIDIA device plugin both register nvidia.com/gpu",
                        obj=f"Package/{HAMI}")


def check_operands(ctx: Context) -> Iterator[Diagnosis]:
    found = sorted(_name(d) for d in ctx.state.daemonsets if _name(d) in PINNED_OFF)
    if not found:
        return
    live = (ctx.state.packages.get(GPU_OPERATOR) or {}).get("spec") or {}
    variant = live.get("variant") or "default"
    ctx.claim(*[p for p in ctx.state.pods if any(_name(p).startswith(f + "-") for f in found)])
    yield Diagnosis("DOC-OPERANDS", f"DaemonSets {', '.join(found)} run though the container variant pins them off; "
                    f"the live cozystack.gpu-operator has variant {variant}", obj=f"DaemonSet/{NAMESPACE}/{found[0]}")


# --- vGPU ----------------------------------------------------------------------------------------


def check_vgpu_device_manager(ctx: Context) -> Iterator[Diagnosis]:
    for pod in pods_named(ctx.state, VGPU_DEVICE_MANAGER):
        line = logged(ctx.state, pod, NO_PARENT_LOG)
        if line is None:
            continue
        node = node_of(pod)
        ctx.claim(pod)
        ctx.noted("DOC-VGPU-DEVICE-MANAGER", node)
        yield Diagnosis("DOC-VGPU-DEVICE-MANAGER", f"{_name(pod)} is {pod_status(pod)}, {line[0]}: \"{line[1]}\" "
                        f"({_device_manager_fix(ctx.route)})", node=node, obj=_ref("Pod", pod))


def _device_manager_fix(route: Route) -> str:
    """The fix fits the GPU generation the overlay names (host.gpuModel; reference (c) vGPU specifics,
    rule GPU-13): SR-IOV GPUs have no mdev bus, mdev GPUs need their vGPU devices configured."""
    model = route.gpu_model
    if route.generation == "sriov":
        return (f"{model} is an SR-IOV GPU: set gpu.vgpuDeviceManager.enabled: false and list the VFs in "
                "gpu.permittedHostDevices.pciHostDevices")
    if route.generation == "mdev":
        return (f"{model} is an mdev GPU: the device manager needs the vGPU Manager loaded on the host "
                "(ls /sys/class/mdev_bus must list the GPU) and a vGPU type from gpu.mediatedDevicesConfiguration "
                "the GPU supports; check the nvidia-vgpu-manager-daemonset pod of the node")
    return ("set host.gpuModel to tell: on an SR-IOV GPU (L4, L40, L40S, B100) set gpu.vgpuDeviceManager.enabled: "
            "false and list the VFs in gpu.permittedHostDevices.pciHostDevices; on an mdev GPU the vGPU Manager "
            "must be loaded on the host (ls /sys/class/mdev_bus)")


def _vgpu_manager_pods(state: LiveState) -> list[Obj]:
    return [p for p in state.pods if _labels(p).get("app") == VGPU_MANAGER_APP
            or _name(p).startswith(VGPU_MANAGER_APP + "-")]  # state.pods: the operator namespace's only


def check_pull_secret(ctx: Context) -> Iterator[Diagnosis]:
    missing = [name for name, exists in ctx.state.secrets.items() if not exists]
    for pod in _vgpu_manager_pods(ctx.state) if missing else []:
        ctx.noted("DOC-PULL-SECRET", node_of(pod))
    for name in missing:
        yield Diagnosis("DOC-PULL-SECRET", f"Secret {NAMESPACE}/{name} named in gpu.vgpuManager.imagePullSecrets "
                        "does not exist", obj=f"Secret/{NAMESPACE}/{name}")
    if missing:
        return
    for pod in _vgpu_manager_pods(ctx.state):
        for event in events_for(ctx.state, _name(pod)):
            if event.get("reason") == PULL_SECRET_EVENT:
                ctx.noted("DOC-PULL-SECRET", node_of(pod))
                yield Diagnosis("DOC-PULL-SECRET", f"{_name(pod)}: {event.get('message')}", node=node_of(pod),
                                obj=_ref("Pod", pod))
                break


def check_vgpu_image(ctx: Context) -> Iterator[Diagnosis]:
    for pod in _vgpu_manager_pods(ctx.state):
        for cs in statuses(pod, True) + statuses(pod, False):
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") not in PULL_REASONS:
                continue
            ctx.claim(pod)
            ctx.noted("DOC-VGPU-IMAGE", node_of(pod))
            failed = [str(e.get("message")) for e in events_for(ctx.state, _name(pod))
                      if e.get("reason") == "Failed" and "pull" in str(e.get("message") or "").lower()]
            detail = failed[-1] if failed else str(waiting.get("message") or "")
            yield Diagnosis("DOC-VGPU-IMAGE", f"{_name(pod)} is {waiting['reason']} for {cs.get('image')}"
                            + (f": {detail}" if detail else ""), node=node_of(pod), obj=_ref("Pod", pod))
            break


# --- the verification Job (any route that renders it) --------------------------------------------


def check_verify_job(ctx: Context) -> Iterator[Diagnosis]:
    if ctx.route.verify_job is None:
        return
    namespace, name = ctx.route.verify_job
    job = next((j for j in ctx.state.jobs if _name(j) == name), None)
    ref = f"Job/{namespace}/{name}"
    if job is None:
        yield Diagnosis("DOC-VERIFY-PENDING", f"verification Job {namespace}/{name} is not on the cluster (not "
                        "synced yet, or deleted)", obj=ref)
        return
    conditions = {c.get("type"): c for c in (job.get("status") or {}).get("conditions") or []
                  if c.get("status") == "True"}
    pods = [p for p in ctx.state.verify_pods if _labels(p).get("job-name") == name]
    ctx.claim(*pods)
    if "Complete" in conditions:
        return
    if "Failed" in conditions:
        detail = ""
        if pods:
            container = str((statuses(pods[-1], False) or [{}])[0].get("name") or "cuda")
            detail = last_line(ctx.state, pods[-1], container)
        reason = conditions["Failed"].get("reason") or "Failed"
        yield Diagnosis("DOC-VERIFY", f"verification Job {namespace}/{name} failed ({reason})"
                        + (f": \"{detail}\"" if detail else ""), node=node_of(pods[-1]) if pods else None, obj=ref)
        return
    waiting = [str(e.get("message")) for p in pods for e in events_for(ctx.state, _name(p))
               if e.get("reason") == "FailedScheduling"]
    yield Diagnosis("DOC-VERIFY-PENDING", f"verification Job {namespace}/{name} has not completed"
                    + (f": {waiting[-1]}" if waiting else ""), obj=ref)


# --- whatever is left ----------------------------------------------------------------------------


def check_pods(ctx: Context) -> Iterator[Diagnosis]:
    for pod in ctx.state.pods:
        if (pod.get("metadata") or {}).get("namespace", NAMESPACE) != NAMESPACE:
            continue
        if _name(pod) in ctx.claimed or pod_healthy(pod):
            continue
        yield Diagnosis("DOC-POD", f"{_name(pod)} is {pod_status(pod)}", node=node_of(pod), obj=_ref("Pod", pod))


Unit = Callable[[Context], Iterator[Diagnosis]]

UNITS: dict[str, tuple[Unit, ...]] = {
    PASSTHROUGH: (check_host_driver, check_vfio_unbound, check_driver_label, check_daemonsets, check_vm_devices),
    VGPU: (check_vgpu_device_manager, check_pull_secret, check_vgpu_image, check_daemonsets, check_vm_devices),
    CONTAINER: (check_operands, check_workload_label, check_runtime_class, check_runtime, check_validator,
                check_daemonsets, check_gpu_allocatable, check_hami),
    TALOS_NATIVE: (check_workload_label, check_runtime_class, check_talos_compat, check_validator,
                   check_daemonsets, check_gpu_allocatable, check_hami),
    NONE: (),
}
assert set(UNITS) >= set(VM_ROUTES) | set(POD_ROUTES)


def diagnose(route: Route, state: LiveState) -> list[Diagnosis]:
    ctx = Context(route, state)
    found: list[Diagnosis] = list(check_shape(ctx))
    found.extend(check_packages(ctx))
    if route.name != NONE:
        found.extend(check_operator(ctx))
    for unit in UNITS[route.name]:
        found.extend(unit(ctx))
    found.extend(check_verify_job(ctx))
    if route.name != NONE:
        found.extend(check_pods(ctx))
        found.extend(check_cluster_policy(ctx, found))
    return [_with_notes(_with_victims(d, ctx), state) for d in found]


def _with_victims(d: Diagnosis, ctx: Context) -> Diagnosis:
    victims = ctx.folded.get((d.code, d.node or ""), [])
    return d._replace(message=f"{d.message}; {'; '.join(victims)}") if victims else d


def _with_notes(d: Diagnosis, state: LiveState) -> Diagnosis:
    """A log that could not be read is a note on the finding of its pod (issue 32 item 4)."""
    if not d.obj or not d.obj.startswith("Pod/"):
        pods = []
    else:
        pods = [d.obj.rsplit("/", 1)[-1]]
    names = pods + [p for p in sorted(state.log_notes) if p not in pods and p in d.message]
    notes = tuple(f"{p}: {n}" for p in names for n in state.log_notes.get(p, []))
    return d._replace(notes=notes) if notes else d
