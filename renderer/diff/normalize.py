"""Normalisation: what is dropped or filled in before a rendered object and its live copy are compared.

Two tables, each entry with its reason (and each with its own test in tests/diff/test_normalize.py):

- ``NORMALISATIONS`` run on both sides: server-owned metadata and ``status`` go, known API-server
  defaults are filled in where absent, integral floats become ints. Filling a default on both sides
  makes "unset" and "set to the default" compare equal, which is what the API server stores.
- ``FOREIGN`` paths are written by other managers (Helm, Flux, Argo CD, controllers) or assigned by
  the server. They are dropped from the live copy only when the render does not set them, so a value
  the render does set is still compared.

Objects are plain JSON-like trees (``dict``/``list``/scalars); every function works on a copy.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, NamedTuple

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
PACKAGE_API = "cozystack.io/v1alpha1"


class Normalisation(NamedTuple):
    name: str
    reason: str
    apply: Callable[[Obj], None]  # changes the object in place
    defaults: bool = False  # a known default: not applied to patch objects, which carry only our fields


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _drop_meta(key: str) -> Callable[[Obj], None]:
    def apply(obj: Obj) -> None:
        _meta(obj).pop(key, None)

    return apply


def _drop_last_applied(obj: Obj) -> None:
    annotations = _meta(obj).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)


def _drop_status(obj: Obj) -> None:
    obj.pop("status", None)


def _drop_empty_maps(obj: Obj) -> None:
    meta = _meta(obj)
    for key in ("labels", "annotations"):
        if key in meta and not meta[key]:
            del meta[key]


def _integral_floats(node: Any) -> Any:
    if isinstance(node, float) and node.is_integer():
        return int(node)
    if isinstance(node, dict):
        for k, v in node.items():
            node[k] = _integral_floats(v)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            node[i] = _integral_floats(v)
    return node


def _is(obj: Obj, api_version: str, kind: str) -> bool:
    return obj.get("apiVersion") == api_version and obj.get("kind") == kind


def _package_variant(obj: Obj) -> None:
    if _is(obj, PACKAGE_API, "Package"):
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict) and not spec.get("variant"):
            spec["variant"] = "default"


def _secret_string_data(obj: Obj) -> None:
    if not _is(obj, "v1", "Secret") or not isinstance(obj.get("stringData"), dict):
        return
    data: dict[str, Any] = obj["data"] if isinstance(obj.get("data"), dict) else {}
    for key, value in obj.pop("stringData").items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    obj["data"] = data


def _setdefaults(node: Any, defaults: dict[str, Any]) -> None:
    if isinstance(node, dict):
        for key, value in defaults.items():
            if key not in node:
                node[key] = _copy(value)


def _copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node


def _namespace_defaults(obj: Obj) -> None:
    if _is(obj, "v1", "Namespace"):
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        name = _meta(obj).get("name")
        if name:
            labels = obj.setdefault("metadata", {}).setdefault("labels", {})
            if isinstance(labels, dict):
                labels.setdefault("kubernetes.io/metadata.name", name)


def _secret_type(obj: Obj) -> None:
    if _is(obj, "v1", "Secret"):
        obj.setdefault("type", "Opaque")


def _service_defaults(obj: Obj) -> None:
    if not _is(obj, "v1", "Service") or not isinstance(obj.get("spec"), dict):
        return
    spec = obj["spec"]
    _setdefaults(spec, {"type": "ClusterIP", "sessionAffinity": "None"})
    if spec.get("type") in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])


def _container_defaults(container: Any) -> None:
    if not isinstance(container, dict):
        return
    image = str(container.get("image", ""))
    tag = image.rsplit("/", 1)[-1]
    pull = "Always" if (":" not in tag and "@" not in tag) or tag.endswith(":latest") else "IfNotPresent"
    _setdefaults(container, {"imagePullPolicy": pull, "terminationMessagePath": "/dev/termination-log",
                             "terminationMessagePolicy": "File", "resources": {}})
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def _pod_template_defaults(template: Any) -> None:
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return
    spec = template["spec"]
    _setdefaults(spec, {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                        "securityContext": {}, "terminationGracePeriodSeconds": 30})
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            _container_defaults(container)


def _workload_defaults(obj: Obj) -> None:
    spec = obj.get("spec")
    if obj.get("apiVersion") != "apps/v1" or not isinstance(spec, dict):
        return
    kind = obj.get("kind")
    if kind == "DaemonSet":
        _setdefaults(spec, {"revisionHistoryLimit": 10,
                            "updateStrategy": {"type": "RollingUpdate",
                                               "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}})
    elif kind == "Deployment":
        _setdefaults(spec, {"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                            "strategy": {"type": "RollingUpdate",
                                         "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}})
    else:
        return
    _pod_template_defaults(spec.get("template"))


NORMALISATIONS: list[Normalisation] = [
    Normalisation("managedFields", "server-side apply bookkeeping, written by the API server on every write",
                  _drop_meta("managedFields")),
    Normalisation("resourceVersion", "the API server's optimistic-concurrency token; changes on every write",
                  _drop_meta("resourceVersion")),
    Normalisation("uid", "assigned by the API server when the object is created", _drop_meta("uid")),
    Normalisation("creationTimestamp", "set by the API server at creation", _drop_meta("creationTimestamp")),
    Normalisation("generation", "incremented by the API server on every spec change", _drop_meta("generation")),
    Normalisation("selfLink", "a server-computed URL (removed in Kubernetes 1.20; old dumps still carry it)",
                  _drop_meta("selfLink")),
    Normalisation("last-applied", "kubectl apply's own copy of the previous input, not part of the object's "
                  "state; it may hold Secret values verbatim", _drop_last_applied),
    Normalisation("status", "written by controllers, never by a render", _drop_status),
    Normalisation("empty-metadata-maps", "an empty labels/annotations map and an absent one are the same to the "
                  "API server, which drops empty maps", _drop_empty_maps),
    Normalisation("integral-floats", "JSON has one number type: 3.0 from YAML and 3 from the API server are the "
                  "same value", _integral_floats),
    Normalisation("secret-stringData", "the API server folds the write-only stringData into data (base64) and "
                  "never returns stringData", _secret_string_data),
    Normalisation("package-variant", "the Cozystack operator resolves an empty Package spec.variant to "
                  "`default` (reference (a), Package API)", _package_variant, defaults=True),
    Normalisation("namespace-defaults", "the API server adds the `kubernetes` finalizer and the "
                  "kubernetes.io/metadata.name label to every Namespace", _namespace_defaults, defaults=True),
    Normalisation("secret-type", "an untyped Secret is stored as type Opaque", _secret_type, defaults=True),
    Normalisation("service-defaults", "API-server defaults of Service: type ClusterIP, sessionAffinity None, "
                  "internalTrafficPolicy Cluster, port protocol TCP and targetPort = port", _service_defaults,
                  defaults=True),
    Normalisation("workload-defaults", "API-server defaults of DaemonSet/Deployment and their pod template "
                  "(revisionHistoryLimit, update strategy, dnsPolicy, restartPolicy, schedulerName, "
                  "terminationGracePeriodSeconds, container imagePullPolicy and termination message)",
                  _workload_defaults, defaults=True),
]


class Foreign(NamedTuple):
    pointer: tuple[str, ...]  # path in the object
    reason: str
    kind: str | None = None  # only objects of this kind (None: every kind)


FOREIGN: list[Foreign] = [
    Foreign(("metadata", "labels", "app.kubernetes.io/managed-by"),
            "Helm stamps managed-by: Helm on every object of the platform release; the render leaves it off those"),
    Foreign(("metadata", "labels", "helm.sh/chart"), "Helm chart label on objects a chart rendered"),
    Foreign(("metadata", "labels", "helm.toolkit.fluxcd.io/name"), "Flux helm-controller marks what it installed"),
    Foreign(("metadata", "labels", "helm.toolkit.fluxcd.io/namespace"),
            "Flux helm-controller marks what it installed"),
    Foreign(("metadata", "labels", "kustomize.toolkit.fluxcd.io/name"),
            "Flux kustomize-controller labels everything it applies"),
    Foreign(("metadata", "labels", "kustomize.toolkit.fluxcd.io/namespace"),
            "Flux kustomize-controller labels everything it applies"),
    Foreign(("metadata", "labels", "app.kubernetes.io/instance"), "Argo CD's legacy tracking label"),
    Foreign(("metadata", "annotations", "meta.helm.sh/release-name"), "Helm release ownership metadata"),
    Foreign(("metadata", "annotations", "meta.helm.sh/release-namespace"), "Helm release ownership metadata"),
    Foreign(("metadata", "annotations", "argocd.argoproj.io/tracking-id"), "Argo CD annotation tracking"),
    Foreign(("metadata", "annotations", "deployment.kubernetes.io/revision"), "written by the Deployment controller"),
    Foreign(("metadata", "annotations", "deprecated.daemonset.template.generation"),
            "written by the DaemonSet controller"),
    Foreign(("metadata", "finalizers"), "added by controllers (the Cozystack operator, Flux) to guard deletion"),
    Foreign(("metadata", "ownerReferences"), "set by the controller that created the object"),
    Foreign(("metadata", "generateName"), "a creation-time request, not state"),
    Foreign(("metadata", "namespace"), "an object rendered without a namespace is applied to the "
            "kubeconfig context's namespace (default)"),
    Foreign(("spec", "clusterIP"), "a Service's address is assigned by the API server", "Service"),
    Foreign(("spec", "clusterIPs"), "a Service's addresses are assigned by the API server", "Service"),
    Foreign(("spec", "ipFamilies"), "chosen by the API server from the cluster's IP families", "Service"),
    Foreign(("spec", "ipFamilyPolicy"), "defaulted by the API server from the cluster's IP families", "Service"),
]


def normalise(obj: Obj, defaults: bool = True) -> Obj:
    """A normalised deep copy of ``obj``. ``defaults=False`` for patch objects (only our fields)."""
    out = _copy(obj)
    for entry in NORMALISATIONS:
        if defaults or not entry.defaults:
            entry.apply(out)
    return out


def drop_foreign(live: Obj, desired: Obj) -> None:
    """Remove from ``live`` (in place) the FOREIGN paths ``desired`` does not set."""
    for entry in FOREIGN:
        if entry.kind is not None and live.get("kind") != entry.kind:
            continue
        *parents, leaf = entry.pointer
        node: Any = live
        want: Any = desired
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
            want = want.get(part) if isinstance(want, dict) else None
        if isinstance(node, dict) and leaf in node and not (isinstance(want, dict) and leaf in want):
            del node[leaf]
            if not node and parents[-1:] in (["labels"], ["annotations"]):
                _drop_empty_maps(live)


def project(live: Any, desired: Any) -> Any:
    """``live`` cut down to the fields ``desired`` carries (a patch object's comparison, design.md
    "Ownership"): maps recurse on the patch's keys; lists and scalars are compared whole, as
    server-side apply replaces an atomic list."""
    if isinstance(desired, dict) and isinstance(live, dict):
        return {k: project(live[k], v) for k, v in desired.items() if k in live}
    return live
