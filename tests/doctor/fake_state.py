"""The API fake for doctor: ``tests.kubefake.KubeFake`` plus the kinds doctor reads (Pod, Node, Event,
RuntimeClass, Job) and pod logs, served as the API server serves them; and builders for the cluster
states the GPU documentation describes.

Kept apart from ``tests/kubefake.py`` (which it only extends): ``DoctorFake`` swaps in a handler
subclass that answers discovery and reads for the extra kinds and
``GET /api/v1/namespaces/{ns}/pods/{name}/log``, and hands everything else to the base handler.

Logs behave as the kubelet's through the API server: ``text/plain``; ``container`` required when the
pod has more than one container; ``previous=true`` answers 400 ``previous terminated container ... not
found`` when the container never restarted; a container still waiting answers 400 ``... is waiting to
start``; ``tailLines`` keeps the last N lines.

The texts in the builders (log lines, messages, labels, pod and container names) are the
documentation's own: W:operations/troubleshooting/gpu-operator-host-driver.md (Symptom),
W:operations/gpu-container-workloads.md (sections 2 and 3), W:virtualization/vgpu.md, the gpu-operator
v26.3.1 validator and the Talos example README (see renderer/doctor/codes.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.kubefake import KINDS, Kind, KubeFake, _handler, _status

Obj = dict[str, Any]
NS = "cozy-gpu-operator"

EXTRA_KINDS = [
    Kind("", "v1", "Pod", "pods", True, ("po",)),
    Kind("", "v1", "Node", "nodes", False, ("no",)),
    Kind("", "v1", "Event", "events", True, ("ev",)),
    Kind("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    Kind("batch", "v1", "Job", "jobs", True),
    Kind("nvidia.com", "v1", "ClusterPolicy", "clusterpolicies", False),
]
ALL_KINDS = KINDS + EXTRA_KINDS
BUILT_IN_GROUPS = ("", "apps", "batch", "node.k8s.io")  # list items without apiVersion/kind


class _Text(str):
    """A body sent as text/plain (pod logs), not JSON."""


class DoctorFake(KubeFake):
    def __init__(self) -> None:
        super().__init__()
        self.logs: dict[tuple[str, str, str, bool], str] = {}  # (namespace, pod, container, previous) -> text
        self.ignore_limit_bytes = False  # a server that sends the whole log whatever limitBytes says
        self.foreign: dict[str, list[Obj]] = {}  # kind -> items added to every namespaced list of it
        self.server.RequestHandlerClass = _doctor_handler(self)

    def _kind_of(self, obj: Obj) -> Kind:
        for k in ALL_KINDS:
            if k.api_version == obj["apiVersion"] and k.kind == obj["kind"]:
                return k
        raise KeyError(f"the fake does not serve {obj['apiVersion']} {obj['kind']}")

    def log(self, pod: str, container: str, text: str, previous: bool = False, namespace: str = NS) -> None:
        self.logs[(namespace, pod, container, previous)] = text

    def load(self, state: State) -> DoctorFake:
        self.add(*state.objects)
        for key, text in state.logs.items():
            self.logs[key] = text
        return self


def _doctor_handler(fake: DoctorFake) -> type:
    base = _handler(fake)

    class Handler(base):  # type: ignore[misc, valid-type]
        def _send(self, code: int, body: Any, fault: Any = None) -> None:
            if not isinstance(body, _Text):
                return super()._send(code, body, fault)
            data = str(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None

        def _route(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, Any]:
            if method != "GET":
                return super()._route(method, path, query, body)
            parts = path.strip("/").split("/")
            if path == "/apis":
                groups = sorted({(k.group, k.version) for k in ALL_KINDS if k.group})
                return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                    {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                     "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}} for g, v in groups]}
            if parts[0] == "apis" and len(parts) == 2:
                versions = sorted({k.version for k in ALL_KINDS if k.group == parts[1]})
                if not versions:
                    raise KeyError(f"group {parts[1]} not served")
                return 200, {"kind": "APIGroup", "apiVersion": "v1", "name": parts[1],
                             "versions": [{"groupVersion": f"{parts[1]}/{v}", "version": v} for v in versions],
                             "preferredVersion": {"groupVersion": f"{parts[1]}/{versions[0]}", "version": versions[0]}}
            if parts[0] == "api" and len(parts) >= 2:
                group, version, rest = "", parts[1], parts[2:]
            elif parts[0] == "apis" and len(parts) >= 3:
                group, version, rest = parts[1], parts[2], parts[3:]
            else:
                return super()._route(method, path, query, body)
            served = [k for k in ALL_KINDS if k.group == group and k.version == version]
            if not served:
                raise KeyError(f"{group}/{version} not served")
            gv = f"{group}/{version}" if group else version
            if not rest:
                resources = [{"name": k.plural, "singularName": k.kind.lower(), "namespaced": k.namespaced,
                              "kind": k.kind, "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                              "shortNames": list(k.short)} for k in served]
                if gv == "v1":
                    resources.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod",
                                      "verbs": ["get"]})
                return 200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
            namespace = ""
            if rest[0] == "namespaces" and len(rest) >= 3:
                namespace, rest = rest[1], rest[2:]
            kind = next((k for k in served if k.plural == rest[0]), None)
            if kind is None:
                raise KeyError(f"{rest[0]} not served in {gv}")
            if len(rest) == 1:
                listed = self._list(kind, namespace, (query.get("labelSelector") or [""])[0])
                if namespace and kind.kind in fake.foreign:  # a hostile server: other namespaces' items too
                    listed["items"] = listed["items"] + json.loads(json.dumps(fake.foreign[kind.kind]))
                if kind.group in BUILT_IN_GROUPS:
                    listed["items"] = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
                                       for o in listed["items"]]
                return 200, listed
            key = (kind.group, kind.kind, namespace if kind.namespaced else "", rest[1])
            obj = fake.objects.get(key)
            if obj is None:
                return 404, _status(404, "NotFound", f'{kind.plural}{"." + kind.group if kind.group else ""} '
                                    f'"{rest[1]}" not found')
            if len(rest) == 3 and kind.kind == "Pod" and rest[2] == "log":
                return self._log(obj, namespace, rest[1], query)
            if len(rest) > 2:
                raise KeyError(path)
            return 200, obj

        def _log(self, pod: Obj, namespace: str, name: str, query: dict[str, list[str]]) -> tuple[int, Any]:
            spec = pod.get("spec") or {}
            names = [c["name"] for c in spec.get("initContainers") or []] + [c["name"] for c in spec.get("containers") or []]
            container = (query.get("container") or [""])[0]
            if not container:
                if len(spec.get("containers") or []) != 1 or spec.get("initContainers"):
                    return 400, _status(400, "BadRequest", f"a container name must be specified for pod {name}, "
                                        f"choose one of: {names}")
                container = names[-1]
            if container not in names:
                return 400, _status(400, "BadRequest", f"container {container} is not valid for pod {name}")
            previous = (query.get("previous") or ["false"])[0] == "true"
            text = fake.logs.get((namespace, name, container, previous))
            if text is None:
                if previous:
                    return 400, _status(400, "BadRequest", f'previous terminated container "{container}" in pod '
                                        f'"{name}" not found')
                status = pod.get("status") or {}
                for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
                    waiting = (cs.get("state") or {}).get("waiting")
                    if cs.get("name") == container and waiting and not cs.get("restartCount"):
                        return 400, _status(400, "BadRequest", f'container "{container}" in pod "{name}" is '
                                            f"waiting to start: {waiting.get('reason', 'ContainerCreating')}")
                text = ""
            tail = (query.get("tailLines") or [""])[0]
            if tail:
                lines = text.splitlines(keepends=True)
                text = "".join(lines[-int(tail):]) if int(tail) > 0 else ""
            limit = (query.get("limitBytes") or [""])[0]
            if limit and not fake.ignore_limit_bytes:
                text = text.encode()[:int(limit)].decode("utf-8", errors="ignore")  # the kubelet cuts bytes
            return 200, _Text(text)

    return Handler


@pytest.fixture
def doctor_fake() -> Iterator[DoctorFake]:
    fake = DoctorFake()
    try:
        yield fake
    finally:
        fake.stop()


# --- building cluster states ---------------------------------------------------------------------


class State:
    """Objects and container logs of one cluster."""

    def __init__(self) -> None:
        self.objects: list[Obj] = []
        self.logs: dict[tuple[str, str, str, bool], str] = {}

    def add(self, *objs: Obj) -> State:
        self.objects.extend(json.loads(json.dumps(o)) for o in objs)
        return self

    def log(self, pod: str, container: str, text: str, previous: bool = False, namespace: str = NS) -> State:
        self.logs[(namespace, pod, container, previous)] = text
        return self

    def find(self, kind: str, name: str) -> Obj:
        return next(o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name)

    def drop(self, kind: str, name: str) -> State:
        self.objects = [o for o in self.objects if not (o["kind"] == kind and o["metadata"]["name"] == name)]
        return self


def running() -> Obj:
    return {"running": {"startedAt": "2026-12-01T08:00:00Z"}}


def completed() -> Obj:
    return {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-12-01T08:00:00Z",
                           "finishedAt": "2026-12-01T08:00:05Z"}}


def waiting(reason: str, message: str = "") -> Obj:
    return {"waiting": {"reason": reason, **({"message": message} if message else {})}}


def crashed(code: int = 1) -> Obj:
    return {"terminated": {"exitCode": code, "reason": "Error", "startedAt": "2026-12-01T08:00:00Z",
                           "finishedAt": "2026-12-01T08:00:01Z"}}


def status(name: str, state: Obj, ready: bool = False, restarts: int = 0, last: Obj | None = None,
           image: str = "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v26.3.1") -> Obj:
    out = {"name": name, "state": state, "ready": ready, "restartCount": restarts, "image": image,
           "imageID": "", "started": "running" in state}
    if last:
        out["lastState"] = last
    return out


def pod(name: str, node: str, *, init: list[Obj] | None = None, containers: list[Obj] | None = None,
        phase: str | None = None, app: str | None = None, namespace: str = NS, labels: dict[str, str] | None = None) -> Obj:
    """A pod as `kubectl get pod -o json` shows it; containers default to one running and ready."""
    containers = containers if containers is not None else [status(name.rsplit("-", 1)[0], running(), ready=True)]
    init = init or []
    if phase is None:
        waiting_init = any(not ("terminated" in s["state"] and s["state"]["terminated"]["exitCode"] == 0) for s in init)
        phase = "Pending" if waiting_init else "Running"
    meta_labels = {"app": app or name.rsplit("-", 1)[0], **(labels or {})}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": meta_labels, "uid": f"uid-{name}"},
            "spec": {"nodeName": node, "initContainers": [{"name": s["name"], "image": s["image"]} for s in init],
                     "containers": [{"name": s["name"], "image": s["image"]} for s in containers]},
            "status": {"phase": phase, "initContainerStatuses": init, "containerStatuses": containers}}


def node(name: str, labels: dict[str, str] | None = None, allocatable: dict[str, str] | None = None,
         gpu: bool = True) -> Obj:
    base = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    if gpu:
        base |= {"feature.node.kubernetes.io/pci-10de.present": "true", "nvidia.com/gpu.present": "true"}
    resources = {"cpu": "64", "memory": "515927292Ki", "pods": "110", **(allocatable or {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {**base, **(labels or {})}},
            "status": {"allocatable": resources, "capacity": dict(resources)}}


def event(involved: Obj, reason: str, message: str, type_: str = "Warning", host: str | None = None) -> Obj:
    meta = involved["metadata"]
    name = f"{meta['name']}.{abs(hash((reason, message))) % 10**12:012x}"
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": meta.get("namespace") or "default"},
            "involvedObject": {"kind": involved["kind"], "name": meta["name"], "namespace": meta.get("namespace"),
                               "apiVersion": involved["apiVersion"]},
            "reason": reason, "message": message, "type": type_, "count": 5,
            "source": {"component": "kubelet", "host": host or (involved.get("spec") or {}).get("nodeName", "")}}


def package(name: str, variant: str | None = None, ready: bool = True, reason: str = "ReconciliationSucceeded",
            message: str = "reconciliation succeeded, generated 1 helmrelease(s)",
            dependencies: dict[str, bool] | None = None) -> Obj:
    spec: Obj = {"variant": variant} if variant else {}
    obj = {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": {"name": name}, "spec": spec,
           "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False", "reason": reason,
                                      "message": message, "lastTransitionTime": "2026-12-01T08:00:00Z"}]}}
    if dependencies is not None:
        obj["status"]["dependencies"] = {k: {"ready": v} for k, v in dependencies.items()}
    return obj


def runtime_class(name: str = "nvidia") -> Obj:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": name}


def deployment(name: str = "gpu-operator", replicas: int = 1, ready: int = 1) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}},
            "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready}}


def cluster_policy(state: str = "ready") -> Obj:
    """The operator's ClusterPolicy (gpu-operator api/nvidia/v1): status.state ready once every operand runs."""
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
            "spec": {}, "status": {"state": state, "namespace": NS}}


def daemonset(name: str, desired: int = 1, ready: int = 1) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": name}}},
            "status": {"desiredNumberScheduled": desired, "numberReady": ready, "currentNumberScheduled": desired}}


NODE = "gpu-node-1"
PLATFORM = package("cozystack.cozystack-platform", "isp-full-generic")
NETWORKING = package("cozystack.networking", "kubeovn-cilium-generic")


def _validator_pods(node_name: str) -> list[Obj]:
    """The container route's validators as section 2 shows them: operator-validator Running, cuda
    validator Completed."""
    stages = ["driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"]
    validator = pod("nvidia-operator-validator-q5n4k", node_name, init=[status(s, completed()) for s in stages],
                    containers=[status("nvidia-operator-validator", running(), ready=True)])
    cuda = pod("nvidia-cuda-validator-tjkfh", node_name, phase="Succeeded",
               containers=[status("nvidia-cuda-validator", completed())])
    return [validator, cuda]


def healthy_container(node_name: str = NODE) -> State:
    """W:operations/gpu-container-workloads.md section 2: every pod Running (the CUDA validator
    Completed), nvidia.com/gpu: 2 allocatable, no driver/toolkit/vfio-manager DaemonSets."""
    state = State().add(PLATFORM, NETWORKING, package("cozystack.gpu-operator", "container"), runtime_class(),
                        node(node_name, allocatable={"nvidia.com/gpu": "2"}))
    state.add(pod("gpu-feature-discovery-7jpzv", node_name), pod("gpu-operator-7976b5b8fb-xqg2z", node_name),
              pod("nvidia-dcgm-exporter-rmpfg", node_name), pod("nvidia-device-plugin-daemonset-cqj9w", node_name),
              *_validator_pods(node_name))
    for name in ("gpu-feature-discovery", "nvidia-dcgm-exporter", "nvidia-device-plugin-daemonset",
                 "nvidia-operator-validator"):
        state.add(daemonset(name))
    state.add(deployment(), cluster_policy())
    state.log("nvidia-operator-validator-q5n4k", "nvidia-operator-validator", "all validations are successful\n")
    return state


def healthy_talos(node_name: str = NODE) -> State:
    state = healthy_container(node_name).drop("Package", "cozystack.gpu-operator")
    state.add(package("cozystack.gpu-operator", "default"), daemonset("nvidia-driver-compat"),
              pod("nvidia-driver-compat-x2d7p", node_name))
    return state


def healthy_passthrough(node_name: str = NODE) -> State:
    """A clean host: vfio-manager bound the GPU (troubleshooting page, "Confirm the host is clean")."""
    state = State().add(PLATFORM, NETWORKING, package("cozystack.gpu-operator", "default"), runtime_class(),
                        node(node_name, labels={"nvidia.com/gpu.workload.config": "vm-passthrough"},
                             allocatable={"nvidia.com/TU104GL_TESLA_T4": "1"}))
    state.add(pod("nvidia-vfio-manager-8xk2p", node_name, init=[status("k8s-driver-manager", completed())],
                  containers=[status("nvidia-vfio-manager", running(), ready=True)]),
              pod("nvidia-sandbox-validator-7h4kq", node_name, init=[status("vfio-pci-validation", completed())],
                  containers=[status("nvidia-sandbox-validator", running(), ready=True)]),
              pod("nvidia-sandbox-device-plugin-daemonset-2lq9d", node_name),
              pod("gpu-operator-7976b5b8fb-xqg2z", node_name))
    state.add(deployment(), cluster_policy(), daemonset("nvidia-vfio-manager"),
              daemonset("nvidia-sandbox-device-plugin-daemonset"), daemonset("nvidia-sandbox-validator"))
    return state


def healthy_vgpu(node_name: str = NODE) -> State:
    state = State().add(PLATFORM, NETWORKING, package("cozystack.gpu-operator", "vgpu"), runtime_class(),
                        node(node_name, labels={"nvidia.com/gpu.workload.config": "vm-vgpu"},
                             allocatable={"nvidia.com/NVIDIA_A100-40C": "1"}))
    state.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "nvidia-registry-secret", "namespace": NS},
               "type": "kubernetes.io/dockerconfigjson"})
    state.add(pod("nvidia-vgpu-manager-daemonset-5xq7r", node_name, app="nvidia-vgpu-manager-daemonset",
                  containers=[status("nvidia-vgpu-manager-ctr", running(), ready=True,
                                     image="registry.example.com/nvidia/vgpu-manager:595.58.02-ubuntu24.04")]),
              pod("nvidia-vgpu-device-manager-m2k8d", node_name),
              pod("nvidia-sandbox-validator-7h4kq", node_name, init=[status("vgpu-manager-validation", completed())],
                  containers=[status("nvidia-sandbox-validator", running(), ready=True)]),
              pod("gpu-operator-7976b5b8fb-xqg2z", node_name))
    state.add(deployment(), cluster_policy(), daemonset("nvidia-vgpu-manager-daemonset"),
              daemonset("nvidia-sandbox-device-plugin-daemonset"), daemonset("nvidia-sandbox-validator"),
              daemonset("nvidia-vgpu-device-manager"))
    return state


# The troubleshooting page's Symptom section, verbatim log lines.
HOST_DRIVER_LOG = ("Host driver detected: 580.82.07\n"
                   "NVIDIA GPU driver is already pre-installed on the node,\n"
                   "  disabling the containerized driver\n"
                   "Labeling node {node} with nvidia.com/gpu.deploy.driver=pre-installed\n")
NOT_BOUND_LOG = ("Error: error validating vfio-pci driver installation:\n"
                 "  device not bound to 'vfio-pci'; device: 0000:18:00.0 driver: 'nvidia'\n")


def host_driver_passthrough(node_name: str = NODE) -> State:
    """Passthrough on an apt host that still has the driver: vfio-manager Init:CrashLoopBackOff with
    "Host driver detected", the pre-installed label, the sandbox validator not bound, allocatable {}."""
    state = healthy_passthrough(node_name)
    gpu_node = state.find("Node", node_name)
    gpu_node["metadata"]["labels"]["nvidia.com/gpu.deploy.driver"] = "pre-installed"
    gpu_node["status"]["allocatable"].pop("nvidia.com/TU104GL_TESLA_T4")
    state.drop("Pod", "nvidia-vfio-manager-8xk2p").drop("Pod", "nvidia-sandbox-validator-7h4kq")
    state.add(pod("nvidia-vfio-manager-8xk2p", node_name,
                  init=[status("k8s-driver-manager", waiting("CrashLoopBackOff", "back-off 5m0s restarting failed "
                                                             "container=k8s-driver-manager"),
                               restarts=7, last=crashed(), image="nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.10.0")],
                  containers=[status("nvidia-vfio-manager", waiting("PodInitializing"))]),
              pod("nvidia-sandbox-validator-7h4kq", node_name,
                  init=[status("vfio-pci-validation", waiting("CrashLoopBackOff"), restarts=6, last=crashed())],
                  containers=[status("nvidia-sandbox-validator", waiting("PodInitializing"))]))
    state.log("nvidia-vfio-manager-8xk2p", "k8s-driver-manager", HOST_DRIVER_LOG.format(node=node_name), previous=True)
    state.log("nvidia-sandbox-validator-7h4kq", "vfio-pci-validation", NOT_BOUND_LOG, previous=True)
    return state


def _fail_plugin_validation(state: State, node_name: str) -> None:
    """The validator's plugin-validation gives up (gpu-operator cmd/nvidia-validator): no nvidia.com/gpu."""
    state.drop("Pod", "nvidia-operator-validator-q5n4k")
    done = [status(s, completed()) for s in ("driver-validation", "toolkit-validation", "cuda-validation")]
    state.add(pod("nvidia-operator-validator-q5n4k", node_name,
                  init=[*done, status("plugin-validation", waiting("CrashLoopBackOff"), restarts=3, last=crashed())],
                  containers=[status("nvidia-operator-validator", waiting("PodInitializing"))]))
    state.log("nvidia-operator-validator-q5n4k", "plugin-validation",
              "".join(f"GPU resources are not yet discovered by the node, retry: {n}\n" for n in range(1, 31))
              + "GPU resources are not discovered by the node\n", previous=True)


def leftover_workload_label(node_name: str = NODE) -> State:
    """gpu-container-workloads.md Prerequisites: a vm-passthrough label left from the passthrough
    setup; the device plugin does not serve the GPU, so nothing is allocatable."""
    state = healthy_container(node_name)
    gpu_node = state.find("Node", node_name)
    gpu_node["metadata"]["labels"]["nvidia.com/gpu.workload.config"] = "vm-passthrough"
    gpu_node["status"]["allocatable"].pop("nvidia.com/gpu")
    state.drop("Pod", "nvidia-device-plugin-daemonset-cqj9w")
    _fail_plugin_validation(state, node_name)
    return state


NO_RUNTIME_MESSAGE = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: '
                      'no runtime for "nvidia" is configured')


def runtime_not_registered(node_name: str = NODE) -> State:
    """nvidia-container-toolkit installed but `nvidia-ctk runtime configure` never run: containerd has no
    nvidia handler, so every pod with runtimeClassName nvidia stays ContainerCreating."""
    state = healthy_container(node_name)
    state.find("Node", node_name)["status"]["allocatable"].pop("nvidia.com/gpu")
    for name in ("nvidia-device-plugin-daemonset-cqj9w", "gpu-feature-discovery-7jpzv", "nvidia-dcgm-exporter-rmpfg",
                 "nvidia-operator-validator-q5n4k", "nvidia-cuda-validator-tjkfh"):
        stuck = pod(name, node_name, phase="Pending",
                    containers=[status(name.rsplit("-", 1)[0], waiting("ContainerCreating"))])
        state.drop("Pod", name).add(stuck, event(stuck, "FailedCreatePodSandBox", NO_RUNTIME_MESSAGE))
    return state


def no_runtime_class(node_name: str = NODE) -> State:
    return healthy_container(node_name).drop("RuntimeClass", "nvidia")


def driver_validation_stuck(node_name: str = NODE) -> State:
    """No working host driver: driver-validation retries forever (WITH_WAIT=true), Init:0/4, no restarts."""
    state = healthy_container(node_name)
    state.find("Node", node_name)["status"]["allocatable"].pop("nvidia.com/gpu")
    state.drop("Pod", "nvidia-operator-validator-q5n4k").drop("Pod", "nvidia-cuda-validator-tjkfh")
    rest = [status(s, waiting("PodInitializing")) for s in ("toolkit-validation", "cuda-validation", "plugin-validation")]
    state.add(pod("nvidia-operator-validator-q5n4k", node_name,
                  init=[status("driver-validation", running()), *rest],
                  containers=[status("nvidia-operator-validator", waiting("PodInitializing"))]))
    state.log("nvidia-operator-validator-q5n4k", "driver-validation",
              "running command chroot with args [/host nvidia-smi]\n"
              "chroot: failed to run command 'nvidia-smi': No such file or directory\n"
              "command failed, retrying after 5 seconds\n")
    return state


def hami_stacked(node_name: str = NODE) -> State:
    return healthy_container(node_name).add(package("cozystack.hami", "default"))


def operands_of_another_variant(node_name: str = NODE) -> State:
    state = healthy_container(node_name).drop("Package", "cozystack.gpu-operator")
    return state.add(package("cozystack.gpu-operator", "default"), daemonset("nvidia-vfio-manager"),
                     pod("nvidia-vfio-manager-8xk2p", node_name, init=[status("k8s-driver-manager", crashed())]))


def vgpu_device_manager_sriov(node_name: str = NODE) -> State:
    """W:virtualization/vgpu.md: the device manager on an Ada Lovelace GPU (L40S) walks /sys/class/mdev_bus
    and fails "no parent devices found"; nothing is allocatable."""
    state = healthy_vgpu(node_name).drop("Pod", "nvidia-vgpu-device-manager-m2k8d")
    state.find("Node", node_name)["status"]["allocatable"].pop("nvidia.com/NVIDIA_A100-40C")
    state.add(pod("nvidia-vgpu-device-manager-m2k8d", node_name,
                  containers=[status("nvidia-vgpu-device-manager", waiting("CrashLoopBackOff"), restarts=9,
                                     last=crashed())]))
    state.log("nvidia-vgpu-device-manager-m2k8d", "nvidia-vgpu-device-manager",
              "Applying vGPU config 'default'\nno parent devices found for GPU at index '0'\n", previous=True)
    return state


VGPU_IMAGE = "registry.example.com/nvidia/vgpu-manager:595.58.02-ubuntu24.04"


def vgpu_image_unpullable(node_name: str = NODE, secret: bool = True) -> State:
    state = healthy_vgpu(node_name).drop("Pod", "nvidia-vgpu-manager-daemonset-5xq7r")
    if not secret:
        state.drop("Secret", "nvidia-registry-secret")
    stuck = pod("nvidia-vgpu-manager-daemonset-5xq7r", node_name, app="nvidia-vgpu-manager-daemonset", phase="Pending",
                containers=[status("nvidia-vgpu-manager-ctr", waiting("ImagePullBackOff", f'Back-off pulling image "{VGPU_IMAGE}"'),
                                   image=VGPU_IMAGE)])
    state.add(stuck, event(stuck, "Failed", f'Failed to pull image "{VGPU_IMAGE}": failed to authorize: failed to '
                           "fetch oauth token: unexpected status from GET request: 401 Unauthorized"))
    if not secret:
        state.add(event(stuck, "FailedToRetrieveImagePullSecret", "Unable to retrieve some image pull secrets "
                        "(nvidia-registry-secret); attempting to pull the image may not succeed."))
    return state


def talos_compat_failing(node_name: str = NODE) -> State:
    """No NVIDIA Talos extension on the node: nvidia-driver-compat cannot copy the driver files, the
    marker is never written, driver-validation waits forever."""
    state = driver_validation_stuck(node_name).drop("Package", "cozystack.gpu-operator")
    state.add(package("cozystack.gpu-operator", "default"), daemonset("nvidia-driver-compat", ready=0))
    compat = pod("nvidia-driver-compat-x2d7p", node_name,
                 containers=[status("nvidia-driver-compat", waiting("CrashLoopBackOff"), restarts=4, last=crashed())])
    state.add(compat).log("nvidia-driver-compat-x2d7p", "nvidia-driver-compat",
                          "cp: can't stat '/usr/local/glibc/usr/lib/libnvidia-ml.so.1': No such file or directory\n",
                          previous=True)
    state.log("nvidia-operator-validator-q5n4k", "driver-validation",
              "running command /run/nvidia/driver/usr/bin/nvidia-smi\ncommand failed, retrying after 5 seconds\n")
    return state


def dependencies_not_ready(node_name: str = NODE) -> State:
    """reference (a): no HelmRelease while a dependency is not Ready; the root is cozystack.networking."""
    state = healthy_container(node_name).drop("Package", "cozystack.gpu-operator").drop("Package", "cozystack.networking")
    return state.add(package("cozystack.gpu-operator", "container", ready=False, reason="DependenciesNotReady",
                             message="dependencies not ready", dependencies={"cozystack.networking": False}),
                     package("cozystack.networking", "kubeovn-cilium-generic", ready=False, reason="HelmReleaseFailed",
                             message="HelmRelease cozy-cilium/cilium failed: install retries exhausted"))


NVIDIA_SMI_OUTPUT = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.82.07              Driver Version: 580.82.07      CUDA Version: 13.0     |
|-----------------------------------------+------------------------+----------------------+
|   0  Tesla T4                       Off |   00000000:18:00.0 Off |                    0 |
+-----------------------------------------+------------------------+----------------------+
"""


def verify_job(state: State, outcome: str, node_name: str = NODE) -> State:
    """The rendered cuda-smoke Job (gpu.verify) after it ran: succeeded, failed, or pending."""
    conditions = {"succeeded": [{"type": "Complete", "status": "True"}],
                  "failed": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                              "message": "Job has reached the specified backoff limit"}],
                  "pending": []}[outcome]
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "cuda-smoke", "namespace": "default",
                                                               "labels": {"render.cozystack.io/gpu-verify": "true"}},
           "spec": {"backoffLimit": 2}, "status": {"conditions": conditions}}
    labels = {"job-name": "cuda-smoke", "batch.kubernetes.io/job-name": "cuda-smoke"}
    if outcome == "succeeded":
        smoke = pod("cuda-smoke-7xv2q", node_name, namespace="default", labels=labels, phase="Succeeded",
                    containers=[status("cuda", completed())])
        state.log("cuda-smoke-7xv2q", "cuda", NVIDIA_SMI_OUTPUT, namespace="default")
    elif outcome == "failed":
        smoke = pod("cuda-smoke-7xv2q", node_name, namespace="default", labels=labels, phase="Failed",
                    containers=[status("cuda", crashed(), restarts=2)])
        state.log("cuda-smoke-7xv2q", "cuda", "Failed to initialize NVML: Unknown Error\n", namespace="default")
        state.log("cuda-smoke-7xv2q", "cuda", "Failed to initialize NVML: Unknown Error\n", previous=True,
                  namespace="default")
    else:
        smoke = pod("cuda-smoke-7xv2q", "", namespace="default", labels=labels, phase="Pending", containers=[])
        smoke["spec"].pop("nodeName")
        state.add(event(smoke, "FailedScheduling", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. "
                        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."))
    return state.add(job, smoke)
