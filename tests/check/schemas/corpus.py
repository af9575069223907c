"""Objects for validator tests and the bench: the reference examples plus one valid object per core kind."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

EXAMPLES = Path(__file__).parent / "data" / "examples"

# The examples that are whole objects. sha256 as listed in the reference's examples/README.md.
EXAMPLE_SHA256 = {
    "gpu-operator-container-package.yaml": "fedfb318c476b3b427a03d2b657008d3714182d1a1c0461827a4e5f86749dbb0",
    "gpu-operator-talos-dcgm-custom-metrics-configmap.yaml":
        "34c72d46f200e9dde607af730166a0bcc6396aa4e2efd72bb9f2cc86b2ec3bed",
    "gpu-operator-talos-nvidia-driver-compat-daemonset.yaml":
        "f88d9af59630215b5b5c839989ea7000a52b845f0631f88dda6a49689c7b5a9e",
    "gpu-operator-values-native-talos-package.yaml": "27ab7c16f2366d569b53a775134d99350d54805027c17bb9596fb151ed57a7d9",
    "kubevirt-package-manual-gpu-wiring.yaml": "335cc02b7cabfcc2f7ffab7ac1e5c7fb933e715bc50cd4e1f12ac7ef23876394",
    "metallb-package-frrk8s-with-namespace.yaml": "e1d3f0afa4d83b26416677ebaf78dd878c94c2364e9349c1104da28052190ce7",
    "platform-package-disabled-metallb-enabled-robotlb.yaml":
        "a720b70bc9e132ee7065a4524ebe46375bb1fca5522ce4a9743a20a352be6b12",
    "platform-package-enabled-external-dns-kuberture.yaml":
        "5e3e9d283dc1c6d1726969b66008a610578610f73bae85d2bfae140fd5dd9c25",
    "platform-package-hetzner-install.yaml": "d7be121a14f5a8ab32dba4d720c2c0ecc14c0201cbf5721ae4340185cceb1809",
    "platform-package-isp-full-example.yaml": "02cbae32e87131bb4c7bf58e38cb389eb5c4bcca8526d6d775b16076c9c3af77",
    "platform-package-stage-cni-plugins-false.yaml": "23c921a135d617c2b7dae402b2b674533ce6603dc83c78ff3187e896fd3cadcf",
    "platform-package-variant-default.yaml": "c258492d631c1207f636c7e2cae0caa57621aea7664937c504105928fde16c46",
    "tenant-kubernetes-gpu-operator-hami.yaml": "4b2d5afcb74709d2765fb956812bfec908d6447ffc656ffde6814b1fb25e97d6",
    "vlan100-network-attachment-definition.yaml": "369191d09e4eb5efbf098497fc2781bbbfc7b400756fdaed9890501b66a06de1",
}


def load(name: str) -> list[dict[str, Any]]:
    y = YAML(typ="safe", pure=True)
    y.version = (1, 1)  # as the renderer reads manifests (yamlio, yaml11=True)
    return [d for d in y.load_all((EXAMPLES / name).read_text(encoding="utf-8")) if d is not None]


def examples() -> list[dict[str, Any]]:
    return [obj for name in sorted(EXAMPLE_SHA256) for obj in load(name)]


META = {"name": "x", "namespace": "ns1", "labels": {"app.kubernetes.io/name": "x"}}
POD = {"metadata": {"labels": {"app": "x"}}, "spec": {
    "serviceAccountName": "x",
    "containers": [{"name": "c", "image": "busybox:1.37", "args": ["sleep", "1"],
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "env": [{"name": "A", "value": "1"}],
                    "resources": {"limits": {"cpu": "100m", "memory": 64}},
                    "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10}}],
    "tolerations": [{"operator": "Exists"}],
    "volumes": [{"name": "v", "configMap": {"name": "x", "defaultMode": 420}}]}}

CORE_SAMPLES: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {
        "pod-security.kubernetes.io/enforce": "privileged"}}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": META, "type": "Opaque", "stringData": {"token": "t"}},
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": META, "automountServiceAccountToken": False},
    {"apiVersion": "v1", "kind": "Service", "metadata": META, "spec": {
        "selector": {"app": "x"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"},
                                            {"name": "m", "port": 9090, "targetPort": 9090}]}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "template": POD}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "x"}, "rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "x"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "x"},
     "subjects": [{"kind": "ServiceAccount", "name": "x", "namespace": "ns1"}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": META, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": META,
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"},
     "subjects": [{"kind": "ServiceAccount", "name": "x"}]},
]


def valid_objects() -> list[dict[str, Any]]:
    return examples() + copy.deepcopy(CORE_SAMPLES)


def _paths(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


def _set(obj: Any, path: tuple, value: Any) -> Any:
    out = copy.deepcopy(obj)
    node = out
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return out


def _delete(obj: Any, path: tuple) -> Any:
    out = copy.deepcopy(obj)
    node = out
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]
    return out


def mutants(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Wrong types at every leaf, an unknown key in every mapping, and each key removed in turn."""
    for path, value in _paths(obj):
        if path and path[0] in ("apiVersion", "kind"):
            continue  # a different kind is a different schema, not a mutant of this one
        if isinstance(value, dict):
            yield _set(obj, path + ("zzUnknown",), 1) if path else {**copy.deepcopy(obj), "zzUnknown": 1}
        if not path:
            continue
        for wrong in _wrong_values(value):
            yield _set(obj, path, wrong)
        if isinstance(path[-1], str):
            yield _delete(obj, path)


def _wrong_values(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return ["yes", 1]
    if isinstance(value, int):
        return ["80", True, 1.5]
    if isinstance(value, str):
        return [7, False, ["a"]]
    if isinstance(value, list):
        return [{"a": 1}, "a"]
    if isinstance(value, dict):
        return [["a"], "a", None]
    return ["a"]
