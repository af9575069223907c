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
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from renderer.model import PACKAGE_API
from renderer.tree import copy_tree

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


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
                node[key] = copy_tree(value)


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
            if "port" in port and port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port["port"]
    _service_more_defaults(spec)


def _image_pull_policy(image: str) -> str:
    """``SetDefaults_Container``: Always for the ``latest`` tag (also an image without tag or digest,
    which ``parsers.ParseImageName`` reads as ``latest``), IfNotPresent otherwise."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if "@" in image and ":" not in last:
        return "IfNotPresent"  # by digest only: the tag is empty
    tag = last.rsplit(":", 1)[1] if ":" in last else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _probe_defaults(probe: Any) -> None:
    # SetDefaults_Probe; SetDefaults_HTTPGetAction; GRPCAction.service `+default=""` (core/v1 types.go).
    if not isinstance(probe, dict):
        return
    _setdefaults(probe, {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    _handler_defaults(probe)
    if isinstance(probe.get("grpc"), dict):
        probe["grpc"].setdefault("service", "")


def _handler_defaults(handler: Any) -> None:
    if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
        _setdefaults(handler["httpGet"], {"path": "/", "scheme": "HTTP"})


def _field_ref_defaults(source: Any) -> None:
    # SetDefaults_ObjectFieldSelector: fieldRef.apiVersion v1.
    if isinstance(source, dict) and isinstance(source.get("fieldRef"), dict):
        source["fieldRef"].setdefault("apiVersion", "v1")


def _container_defaults(container: Any) -> None:
    if not isinstance(container, dict):
        return
    # SetDefaults_Container; ResourceRequirements is a struct, so an unset one is stored as {}.
    _setdefaults(container, {"imagePullPolicy": _image_pull_policy(str(container.get("image", ""))),
                             "terminationMessagePath": "/dev/termination-log",
                             "terminationMessagePolicy": "File", "resources": {}})
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")  # ContainerPort.protocol `+default="TCP"`
    for env in container.get("env") or []:
        if isinstance(env, dict):
            _field_ref_defaults(env.get("valueFrom"))
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe_defaults(container.get(key))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        for key in ("postStart", "preStop"):
            _handler_defaults(lifecycle.get(key))
    resources = container.get("resources")
    if isinstance(resources, dict):
        for key in ("limits", "requests"):
            if isinstance(resources.get(key), dict):
                resources[key] = {k: canonical_quantity(v) for k, v in resources[key].items()}


# Volume sources the API server knows; a volume with none of them is stored as an emptyDir
# (SetDefaults_Volume).
VOLUME_SOURCES = frozenset({
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"})


def _volume_defaults(volume: Any) -> None:
    if not isinstance(volume, dict):
        return
    if not VOLUME_SOURCES & volume.keys():
        volume["emptyDir"] = {}
    if isinstance(volume.get("hostPath"), dict):
        volume["hostPath"].setdefault("type", "")  # SetDefaults_HostPathVolumeSource: HostPathUnset
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(volume.get(key), dict):
            volume[key].setdefault("defaultMode", 420)  # Set*VolumeSource: 0644
    if isinstance(volume.get("emptyDir"), dict) and "sizeLimit" in volume["emptyDir"]:
        volume["emptyDir"]["sizeLimit"] = canonical_quantity(volume["emptyDir"]["sizeLimit"])
    for item in (volume.get("downwardAPI") or {}).get("items") or [] if isinstance(volume.get("downwardAPI"),
                                                                                   dict) else []:
        _field_ref_defaults(item)
    projected = volume.get("projected")
    for source in (projected.get("sources") or []) if isinstance(projected, dict) else []:
        if not isinstance(source, dict):
            continue
        if isinstance(source.get("serviceAccountToken"), dict):
            # SetDefaults_ServiceAccountTokenProjection: one hour.
            source["serviceAccountToken"].setdefault("expirationSeconds", 3600)
        if isinstance(source.get("downwardAPI"), dict):
            for item in source["downwardAPI"].get("items") or []:
                _field_ref_defaults(item)


def _pod_template_defaults(template: Any) -> None:
    if not isinstance(template, dict):
        return
    meta = template.get("metadata")
    if isinstance(meta, dict) and "creationTimestamp" in meta and meta["creationTimestamp"] is None:
        del meta["creationTimestamp"]  # a zero metav1.Time the server serialises as null in templates
        if not meta:
            del template["metadata"]
    if not isinstance(template.get("spec"), dict):
        return
    spec = template["spec"]
    # SetDefaults_PodSpec (SetDefaults_Pod's enableServiceLinks and host ports are for Pods, not templates).
    _setdefaults(spec, {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                        "securityContext": {}, "terminationGracePeriodSeconds": 30})
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            _container_defaults(container)
    for volume in spec.get("volumes") or []:
        _volume_defaults(volume)


def _workload_defaults(obj: Obj) -> None:
    spec = obj.get("spec")
    if obj.get("apiVersion") != "apps/v1" or not isinstance(spec, dict):
        return
    kind = obj.get("kind")
    if kind == "DaemonSet":  # SetDefaults_DaemonSet
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                if isinstance(rolling, dict):
                    _setdefaults(rolling, {"maxUnavailable": 1, "maxSurge": 0})
        spec.setdefault("revisionHistoryLimit", 10)
    elif kind == "Deployment":  # SetDefaults_Deployment
        strategy = spec.setdefault("strategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                if isinstance(rolling, dict):
                    _setdefaults(rolling, {"maxUnavailable": "25%", "maxSurge": "25%"})
        _setdefaults(spec, {"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600})
    else:
        return
    _pod_template_defaults(spec.get("template"))


def _job_defaults(obj: Obj) -> None:
    """SetDefaults_Job (pkg/apis/batch/v1/defaults.go): one pod at a time to one completion unless
    said otherwise, backoffLimit 6, NonIndexed, not suspended, pods replaced once terminating or
    failed (JobPodReplacementPolicy, on by default since 1.29); then the pod template's defaults."""
    spec = obj.get("spec")
    if obj.get("apiVersion") != "batch/v1" or obj.get("kind") != "Job" or not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _setdefaults(spec, {"parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": False})
    if spec.get("podFailurePolicy") is None:
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    _pod_template_defaults(spec.get("template"))


RBAC_GROUP = "rbac.authorization.k8s.io"


def _rbac_binding_defaults(obj: Obj) -> None:
    # SetDefaults_RoleBinding / SetDefaults_ClusterRoleBinding and SetDefaults_Subject (rbac/v1).
    if obj.get("apiVersion") != f"{RBAC_GROUP}/v1" or obj.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
        return
    role_ref = obj.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = RBAC_GROUP
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and not subject.get("apiGroup"):
            if subject.get("kind") == "ServiceAccount":
                subject.pop("apiGroup", None)  # "" is omitted on output
            elif subject.get("kind") in ("User", "Group"):
                subject["apiGroup"] = RBAC_GROUP


def _service_more_defaults(spec: Obj) -> None:
    # SetDefaults_Service: externalTrafficPolicy for externally reachable Services, the LoadBalancer
    # node-port allocation, and the ClientIP affinity timeout.
    externally = spec.get("type") in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))
    if externally:
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec.get("type") == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    if spec.get("sessionAffinity") == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec.get("sessionAffinity") == "ClientIP":
        config = spec.setdefault("sessionAffinityConfig", {})
        if isinstance(config, dict):
            client_ip = config.setdefault("clientIP", {})
            if isinstance(client_ip, dict):
                client_ip.setdefault("timeoutSeconds", 10800)


# --- quantities ------------------------------------------------------------------------------

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d{1,3}))?$")


def canonical_quantity(value: Any) -> Any:
    """A resource quantity as the API server stores it (apimachinery ``resource.Quantity``: rounded up
    to milli units, then written in the canonical form of its suffix family: ``0.5`` -> ``500m``,
    ``1000m`` -> ``1``, ``1024Mi`` -> ``1Gi``, ``1000`` -> ``1k``). Anything that is not a quantity
    is returned unchanged (validation is not diff's job)."""
    from decimal import ROUND_CEILING, Decimal, localcontext

    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if match is None or len(text) > 64:
        return value
    number, suffix, exponent = match.group(1), match.group(2), match.group(3)
    with localcontext() as ctx:
        ctx.prec = 80
        amount = Decimal(number)
        if suffix in _BINARY:
            amount *= Decimal(1024) ** _BINARY[suffix]
            family = "binary"
        elif exponent is not None:
            amount *= Decimal(10) ** int(exponent)
            family = "exponent"
        else:
            amount *= Decimal(10) ** _DECIMAL[suffix or ""]
            family = "decimal"
        amount = (amount * 1000).to_integral_value(rounding=ROUND_CEILING) / 1000  # RoundUp(milli)
        if amount == 0:
            return "0"
        if family == "binary" and amount == amount.to_integral_value() and abs(amount) >= 1024:
            whole = int(amount)
            power = 0
            while power < 6 and whole % 1024 == 0:
                whole //= 1024
                power += 1
            return f"{whole}{next(k for k, v in _BINARY.items() if v == power)}"
        milli = int(amount * 1000)
        power = -3
        while power < 18 and milli % 1000 == 0:
            milli //= 1000
            power += 3
        if family == "exponent":
            return f"{milli}e{power}" if power else str(milli)
        return f"{milli}{_DECIMAL_SUFFIX[power]}"


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
                  "terminationGracePeriodSeconds, container imagePullPolicy, termination message, probes, "
                  "fieldRef apiVersion, volume defaultMode and hostPath type, quantities in canonical form)",
                  _workload_defaults, defaults=True),
    Normalisation("job-defaults", "API-server defaults of Job (completions, parallelism, backoffLimit, "
                  "completionMode, suspend, podReplacementPolicy) and its pod template", _job_defaults,
                  defaults=True),
    Normalisation("rbac-defaults", "API-server defaults of RoleBinding/ClusterRoleBinding: roleRef.apiGroup and "
                  "a User/Group subject's apiGroup are rbac.authorization.k8s.io", _rbac_binding_defaults,
                  defaults=True),
]


class KindDefaults(NamedTuple):
    """The reviewed server-side defaulting of one kind cozy-render can emit."""

    normalisations: tuple[str, ...]  # NORMALISATIONS entries that fill its defaults
    source: str  # the Kubernetes defaulting code (or CRD schema) the entries follow


_CORE = "kubernetes/kubernetes pkg/apis/core/v1/defaults.go"
_POD = (f"{_CORE} (SetDefaults_PodSpec, _Container, _Probe, _HTTPGetAction, _Volume, _HostPathVolumeSource, "
        "_SecretVolumeSource, _ConfigMapVolumeSource, _DownwardAPIVolumeSource, _ProjectedVolumeSource, "
        "_ServiceAccountTokenProjection, _ObjectFieldSelector, _ResourceList); ContainerPort.protocol and "
        "GRPCAction.service `+default` in staging/src/k8s.io/api/core/v1/types.go")

# Every kind the output schema catalogue lists (renderer/check/schemas/catalog.py CORE_KINDS and
# CRD_KINDS): tests/diff/test_normalize.py fails on an emitted kind without an entry here. An empty
# tuple is a reviewed "the server defaults nothing visible".
KIND_DEFAULTS: dict[tuple[str, str], KindDefaults] = {
    ("v1", "ConfigMap"): KindDefaults((), f"{_CORE} SetDefaults_ConfigMap (an empty data map, omitted on output)"),
    ("v1", "Namespace"): KindDefaults(("namespace-defaults",), f"{_CORE} SetDefaults_Namespace; the finalizer: "
                                      "pkg/registry/core/namespace/strategy.go PrepareForCreate"),
    ("v1", "Secret"): KindDefaults(("secret-type", "secret-stringData"), f"{_CORE} SetDefaults_Secret; stringData: "
                                   "pkg/registry/core/secret/strategy.go dropDisabledFields/PrepareForCreate"),
    ("v1", "Service"): KindDefaults(("service-defaults",), f"{_CORE} SetDefaults_Service; ServicePort.protocol "
                                    "`+default`; clusterIP(s), ipFamilies, nodePort are FOREIGN (allocated)"),
    ("v1", "ServiceAccount"): KindDefaults((), f"{_CORE}: no SetDefaults_ServiceAccount"),
    ("apps/v1", "DaemonSet"): KindDefaults(("workload-defaults",),
                                           f"kubernetes/kubernetes pkg/apis/apps/v1/defaults.go SetDefaults_DaemonSet; "
                                           f"{_POD}"),
    ("apps/v1", "Deployment"): KindDefaults(("workload-defaults",),
                                            "kubernetes/kubernetes pkg/apis/apps/v1/defaults.go "
                                            f"SetDefaults_Deployment; {_POD}"),
    ("batch/v1", "Job"): KindDefaults(("job-defaults",), "kubernetes/kubernetes pkg/apis/batch/v1/defaults.go "
                                      f"SetDefaults_Job; {_POD}; spec.selector and the controller-uid/job-name "
                                      "template labels are FOREIGN (pkg/registry/batch/job/strategy.go)"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): KindDefaults((), "pkg/apis/rbac/v1/defaults.go: none"),
    ("rbac.authorization.k8s.io/v1", "Role"): KindDefaults((), "pkg/apis/rbac/v1/defaults.go: none"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): KindDefaults(
        ("rbac-defaults",), "pkg/apis/rbac/v1/defaults.go SetDefaults_ClusterRoleBinding, SetDefaults_Subject"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): KindDefaults(
        ("rbac-defaults",), "pkg/apis/rbac/v1/defaults.go SetDefaults_RoleBinding, SetDefaults_Subject"),
    ("cozystack.io/v1alpha1", "Package"): KindDefaults(
        ("package-variant",), "cozystack.io_packages.yaml has no structural-schema default; the operator "
        "resolves an empty variant to `default` (reference (a))"),
    ("cozystack.io/v1alpha1", "PackageSource"): KindDefaults(
        (), "cozystack.io_packagesources.yaml: no structural-schema default"),
    ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"): KindDefaults(
        (), "network-attachment-definitions.k8s.cni.cncf.io.yaml: no structural-schema default"),
}


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
    Foreign(("metadata", "annotations", "kustomize.toolkit.fluxcd.io/substitute"),
            "cozy-render's own mark (render --out, renderer/check/flux.py) on objects holding ${: never drift; "
            "--delivery flux renders it, so then it is compared"),
    Foreign(("metadata", "finalizers"), "added by controllers (the Cozystack operator, Flux) to guard deletion"),
    Foreign(("metadata", "ownerReferences"), "set by the controller that created the object"),
    Foreign(("metadata", "generateName"), "a creation-time request, not state"),
    Foreign(("metadata", "namespace"), "an object rendered without a namespace is applied to the "
            "kubeconfig context's namespace (default)"),
    Foreign(("spec", "selector"), "generated by the API server from the Job's uid (manualSelector unset)", "Job"),
    *(Foreign(("spec", "template", "metadata", "labels", label), "stamped by the API server on a Job's pod template "
              "(pkg/registry/batch/job/strategy.go generateSelector)", "Job")
      for label in ("batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name", "controller-uid",
                    "job-name")),
    Foreign(("spec", "clusterIP"), "a Service's address is assigned by the API server", "Service"),
    Foreign(("spec", "clusterIPs"), "a Service's addresses are assigned by the API server", "Service"),
    Foreign(("spec", "ipFamilies"), "chosen by the API server from the cluster's IP families", "Service"),
    Foreign(("spec", "ipFamilyPolicy"), "defaulted by the API server from the cluster's IP families", "Service"),
    Foreign(("spec", "healthCheckNodePort"), "allocated by the API server for a Local LoadBalancer", "Service"),
]


def normalise(obj: Obj, defaults: bool = True) -> Obj:
    """A normalised deep copy of ``obj``. ``defaults=False`` for patch objects (only our fields)."""
    out = _copy_integral(obj)  # the copy and the integral-floats entry in one pass (speed)
    for entry in NORMALISATIONS:
        if (defaults or not entry.defaults) and entry.apply is not _integral_floats:
            entry.apply(out)
    return out


def _copy_integral(node: Any) -> Any:
    cls = node.__class__
    if cls is dict:
        return {k: _copy_integral(v) for k, v in node.items()}
    if cls is list:
        return [_copy_integral(v) for v in node]
    if cls is float and node.is_integer():
        return int(node)
    return copy_tree(node) if isinstance(node, (dict, list)) else node


def _by_parent() -> dict[tuple[str, ...], list[tuple[str, str | None]]]:
    grouped: dict[tuple[str, ...], list[tuple[str, str | None]]] = {}
    for entry in FOREIGN:
        grouped.setdefault(entry.pointer[:-1], []).append((entry.pointer[-1], entry.kind))
    return grouped


_FOREIGN_BY_PARENT = _by_parent()


def drop_foreign(live: Obj, desired: Obj) -> None:
    """Remove from ``live`` (in place) the FOREIGN paths ``desired`` does not set."""
    kind = live.get("kind")
    for parents, leaves in _FOREIGN_BY_PARENT.items():
        node: Any = live
        want: Any = desired
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
            want = want.get(part) if isinstance(want, dict) else None
        if not isinstance(node, dict) or not node:
            continue
        wanted = want if isinstance(want, dict) else {}
        for leaf, only in leaves:
            if leaf in node and leaf not in wanted and (only is None or only == kind):
                del node[leaf]
        if not node and parents[-1:] in (("labels",), ("annotations",)):
            _drop_empty_maps(live)
    _drop_node_ports(live, desired)


def _drop_node_ports(live: Obj, desired: Obj) -> None:
    # A NodePort/LoadBalancer Service's ports[].nodePort is allocated by the API server when unset.
    if live.get("kind") != "Service" or live.get("apiVersion") != "v1":
        return
    have = (live.get("spec") or {}).get("ports") if isinstance(live.get("spec"), dict) else None
    want = (desired.get("spec") or {}).get("ports") if isinstance(desired.get("spec"), dict) else None
    if not isinstance(have, list):
        return
    wanted = {(p.get("port"), p.get("protocol", "TCP")): p for p in want or [] if isinstance(p, dict)}
    for port in have:
        if isinstance(port, dict) and "nodePort" in port:
            mine = wanted.get((port.get("port"), port.get("protocol", "TCP")))
            if mine is None or "nodePort" not in mine:
                del port["nodePort"]


def project(live: Any, desired: Any) -> Any:
    """``live`` cut down to the fields ``desired`` carries (a patch object's comparison, design.md
    "Ownership"): maps recurse on the patch's keys; lists and scalars are compared whole, as
    server-side apply replaces an atomic list."""
    if isinstance(desired, dict) and isinstance(live, dict):
        return {k: project(live[k], v) for k, v in desired.items() if k in live}
    return live
