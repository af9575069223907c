"""A Kubernetes API server fake over real HTTP, for diff's tests (no kube-apiserver runs here).

stdlib ``ThreadingHTTPServer`` on 127.0.0.1 with an OS-chosen port, started and stopped by the
``kube_fake`` fixture. It serves what the official client, and ``kubectl get``, need:

- discovery: ``/version``, ``/api``, ``/api/v1``, ``/apis``, ``/apis/{group}``, ``/apis/{group}/{version}``
  (plain JSON: kubectl falls back from aggregated discovery when it gets it);
- get and list, cluster-wide and per namespace, with equality label selectors (``a=b``, ``a!=b``,
  ``a``, ``!a``, comma-separated); lists carry ``kind: <Kind>List``, and their items lack apiVersion and
  kind for built-in kinds, as the real server's typed lists do (custom resources keep them);
- ``PATCH`` with ``application/apply-patch+yaml`` (server-side apply): ``fieldManager`` required,
  ``dryRun=All`` returns the result without storing it. **The merge is simplified**: maps merge
  recursively with the patch winning, lists and scalars are replaced whole (no list-map keys, no
  field ownership or conflicts, no removal of fields the manager stopped sending); the result gets a
  new resourceVersion, managedFields gains the manager's entry, and status is kept;
- faults: ``fail(pattern, status)`` (401/403/404/500 with a ``Status`` body, optionally only the first
  N times), ``slow(pattern, seconds)``, ``truncate(pattern)`` (a Content-Length longer than the body,
  then the connection closes), and ``garble(pattern)`` (complete but malformed JSON);
- ``requests``: every (method, path, query) seen, for tests that check what diff reads.

Objects go in with ``add(obj)`` as stored, or ``add(realistic(obj))`` to get the server-owned fields a
real dump has (uid, resourceVersion, creationTimestamp, generation, managedFields, status).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlparse

import pytest

Obj = dict[str, Any]


class Kind(NamedTuple):
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


KINDS = [
    Kind("", "v1", "Namespace", "namespaces", False, ("ns",)),
    Kind("", "v1", "ConfigMap", "configmaps", True, ("cm",)),
    Kind("", "v1", "Secret", "secrets", True),
    Kind("", "v1", "Service", "services", True, ("svc",)),
    Kind("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",)),
    Kind("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",)),
    Kind("apps", "v1", "Deployment", "deployments", True, ("deploy",)),
    Kind("cozystack.io", "v1alpha1", "Package", "packages", False, ("pkg",)),
    Kind("cozystack.io", "v1alpha1", "PackageSource", "packagesources", False),
    Kind("k8s.cni.cncf.io", "v1", "NetworkAttachmentDefinition", "network-attachment-definitions", True,
         ("net-attach-def",)),
]

HELM_LABELS = {"app.kubernetes.io/managed-by": "Helm", "helm.toolkit.fluxcd.io/name": "cozystack-platform",
               "helm.toolkit.fluxcd.io/namespace": "cozy-system"}
HELM_ANNOTATIONS = {"meta.helm.sh/release-name": "cozystack-platform", "meta.helm.sh/release-namespace": "cozy-system",
                    "helm.sh/resource-policy": "keep"}


def _copy(node: Any) -> Any:
    return json.loads(json.dumps(node))


_counter = iter(range(1000, 10**9))


def realistic(obj: Obj, *, helm: bool = False, manager: str = "cozy-render", status: bool = True) -> Obj:
    """``obj`` as ``kubectl get -o yaml`` would show it after the API server stored it."""
    out = _copy(obj)
    meta = out.setdefault("metadata", {})
    n = next(_counter)
    meta["uid"] = f"6f1c2a4e-0000-4000-8000-{n:012d}"
    meta["resourceVersion"] = str(n)
    meta["creationTimestamp"] = "2026-11-30T08:15:42Z"
    meta["generation"] = 2
    if helm:
        meta["labels"] = {**HELM_LABELS, **(meta.get("labels") or {})}
        meta["annotations"] = {**HELM_ANNOTATIONS, **(meta.get("annotations") or {})}
        manager = "helm-controller"
    fields = {f"f:{k}": {} for k in out if k not in ("apiVersion", "kind", "metadata", "status")}
    meta["managedFields"] = [{"apiVersion": out.get("apiVersion"), "fieldsType": "FieldsV1",
                              "fieldsV1": fields, "manager": manager, "operation": "Apply",
                              "time": "2026-11-30T08:15:42Z"}]
    if status and out.get("kind") == "Package":
        out["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded",
                                         "lastTransitionTime": "2026-11-30T08:16:03Z", "message": ""}],
                         "observedGeneration": 2}
    if out.get("kind") == "Namespace":
        out.setdefault("spec", {"finalizers": ["kubernetes"]})
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        if status:
            out["status"] = {"phase": "Active"}
    if out.get("kind") == "DaemonSet" and status:
        out["status"] = {"currentNumberScheduled": 3, "desiredNumberScheduled": 3, "numberReady": 3,
                         "observedGeneration": 2}
    return out


# --- what a real API server and its controllers add (issue 18) ---------------------------------
#
# Written from the Kubernetes defaulting code directly (pkg/apis/core/v1/defaults.go, apps/v1 and
# rbac/v1 defaults.go, the `+default` markers of core/v1 types.go), as a table of paths, on purpose
# not sharing code with renderer/diff/normalize.py: the normaliser is tested against this model.

_POD_SPEC_DEFAULTS = {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                      "securityContext": {}, "terminationGracePeriodSeconds": 30}
_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
_STORED_QUANTITIES = {"0.5": "500m", "0.1": "100m", "1000m": "1", "1024Mi": "1Gi", "1000": "1k"}


def _fill(node: Any, defaults: dict[str, Any]) -> None:
    if isinstance(node, dict):
        for key, value in defaults.items():
            if key not in node:
                node[key] = _copy(value)


def _default_container(c: Obj) -> None:
    tag = c.get("image", "").split("@")[0].rsplit("/", 1)[-1]
    latest = "@" not in c.get("image", "") and (":" not in tag or tag.endswith(":latest"))
    _fill(c, {"imagePullPolicy": "Always" if latest else "IfNotPresent",
              "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
              "resources": {}})
    for port in c.get("ports", []):
        _fill(port, {"protocol": "TCP"})
    for probe in (c.get(k) for k in ("livenessProbe", "readinessProbe", "startupProbe")):
        if probe:
            _fill(probe, _PROBE_DEFAULTS)
            if "httpGet" in probe:
                _fill(probe["httpGet"], {"path": "/", "scheme": "HTTP"})
    for env in c.get("env", []):
        if "fieldRef" in env.get("valueFrom", {}):
            _fill(env["valueFrom"]["fieldRef"], {"apiVersion": "v1"})
    for section in ("limits", "requests"):
        values = c["resources"].get(section) or {}
        for name, value in values.items():
            values[name] = _STORED_QUANTITIES.get(str(value), str(value))


def _default_pod_template(template: Obj) -> None:
    template.setdefault("metadata", {})["creationTimestamp"] = None  # what a 1.33 server writes
    spec = template.setdefault("spec", {})
    _fill(spec, _POD_SPEC_DEFAULTS)
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        _default_container(c)
    for volume in spec.get("volumes", []):
        if "hostPath" in volume:
            _fill(volume["hostPath"], {"type": ""})
        for source in ("configMap", "secret", "projected", "downwardAPI"):
            if source in volume:
                _fill(volume[source], {"defaultMode": 420})
        if len(volume) == 1:
            volume["emptyDir"] = {}


def server_defaults(obj: Obj) -> Obj:
    """``obj`` (a copy) with what the API server's defaulting adds on create, for the kinds cozy-render
    emits (a Package's variant is the operator's, not the server's: not here)."""
    out = _copy(obj)
    kind, spec = out.get("kind"), out.get("spec")
    if kind == "Secret":
        _fill(out, {"type": "Opaque"})
    elif kind == "Service" and isinstance(spec, dict):
        _fill(spec, {"type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                     "clusterIP": "10.96.0.17", "clusterIPs": ["10.96.0.17"], "ipFamilies": ["IPv4"],
                     "ipFamilyPolicy": "SingleStack"})
        for port in spec.get("ports", []):
            _fill(port, {"protocol": "TCP", "targetPort": port.get("port")})
    elif kind == "DaemonSet" and isinstance(spec, dict):
        _fill(spec, {"revisionHistoryLimit": 10,
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}})
        _default_pod_template(spec.setdefault("template", {}))
    elif kind == "Deployment" and isinstance(spec, dict):
        _fill(spec, {"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}})
        _default_pod_template(spec.setdefault("template", {}))
    elif kind in ("RoleBinding", "ClusterRoleBinding"):
        _fill(out.get("roleRef"), {"apiGroup": "rbac.authorization.k8s.io"})
        for subject in out.get("subjects", []):
            if subject.get("kind") in ("User", "Group"):
                _fill(subject, {"apiGroup": "rbac.authorization.k8s.io"})
    elif kind == "Namespace":
        out.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        out["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = out["metadata"]["name"]
    return out


ARGO_MANAGER = "argocd-controller"
HELM_MANAGER = "helm-controller"
OPERATOR_MANAGER = "cozystack-operator"


def _fields_of(node: Any) -> Any:
    if isinstance(node, dict):
        return {f"f:{k}": _fields_of(v) for k, v in node.items()}
    return {}


def managed_entry(manager: str, obj: Obj, operation: str = "Apply", subresource: str | None = None) -> Obj:
    """A managedFields entry as the server writes it (FieldsV1 of every field ``obj`` sets)."""
    entry: Obj = {"apiVersion": obj.get("apiVersion"), "fieldsType": "FieldsV1",
                  "fieldsV1": _fields_of({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}),
                  "manager": manager, "operation": operation, "time": "2026-11-30T08:15:42Z"}
    if subresource:
        entry["subresource"] = subresource
    return entry


def argo_synced(obj: Obj, app: str = "cozy-render") -> Obj:
    """``obj`` as Argo CD's server-side apply leaves it: defaults, the tracking-id annotation,
    managedFields of Argo CD, a controller's status writer, and the DaemonSet controller's
    generation annotation."""
    out = realistic(server_defaults(obj), manager=ARGO_MANAGER)
    meta = out["metadata"]
    meta_ns = meta.get("namespace") or ""
    group = out["apiVersion"].rsplit("/", 1)[0] if "/" in out["apiVersion"] else ""
    meta.setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = \
        f"{app}:{group}/{out['kind']}:{meta_ns}/{meta['name']}"
    if out["kind"] in ("DaemonSet", "Deployment"):
        key = "deprecated.daemonset.template.generation" if out["kind"] == "DaemonSet" \
            else "deployment.kubernetes.io/revision"
        meta["annotations"][key] = "1"
    meta["managedFields"] = [managed_entry(ARGO_MANAGER, obj)]
    if "status" in out:
        meta["managedFields"].append(managed_entry(
            OPERATOR_MANAGER if out["kind"] == "Package" else "kube-controller-manager",
            {"status": out["status"]}, "Update", "status"))
    return out


def helm_owned(obj: Obj) -> Obj:
    """A Package of the platform release as helm-controller v1.5.0 leaves it (Helm's labels and
    annotations, keep policy, helm-controller's managedFields, the operator's status)."""
    out = realistic(obj, helm=True)
    out["metadata"]["managedFields"] = [managed_entry(HELM_MANAGER, obj), managed_entry(
        OPERATOR_MANAGER, {"status": out.get("status", {})}, "Update", "status")]
    return out


def co_managed(platform: Obj, patch: Obj) -> Obj:
    """A platform Package with cozy-render's patch applied over it (two managers own its fields)."""
    merged = _merge(platform, patch)
    out = helm_owned(merged)
    out["metadata"]["managedFields"].insert(1, managed_entry(ARGO_MANAGER, patch))
    return out


def unlabelled_platform_packages(count: int = 40) -> list[Obj]:
    """Packages the platform release installs on its own (no cozy-render label), as on a real cluster."""
    return [helm_owned({"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                        "metadata": {"name": f"cozystack.platform-{i:02d}"}, "spec": {"variant": "default"}})
            for i in range(count)]


def _merge(base: Any, patch: Any) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = _merge(base.get(k), v) if k in base else _copy(v)
        return out
    return _copy(patch)


def _selector_matches(selector: str, labels: dict[str, str]) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = term.split("==", 1) if "==" in term else term.split("=", 1)
            if labels.get(k) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


class Gauge:
    """Requests in flight across the fakes that share it, and the most seen at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.current = 0
        self.peak = 0

    def __enter__(self) -> Gauge:
        with self.lock:
            self.current += 1
            self.peak = max(self.peak, self.current)
        return self

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.current -= 1


class Fault(NamedTuple):
    pattern: re.Pattern[str]
    kind: str  # status | slow | truncate | garble
    value: float
    times: list[int]  # remaining count, [-1] forever


class KubeFake:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str, str], Obj] = {}  # (group, kind, namespace, name)
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.token: str | None = None
        self.status_message: str | None = None  # the message of injected failures (default: "injected N for PATH")
        self.canned: dict[str, bytes] = {}  # path -> the exact body to answer a GET with (fuzzing)
        self.gauge: Gauge | None = None  # shared between fakes: how many requests are in flight at once
        self.gauge_only: re.Pattern[str] | None = None  # count only requests to matching paths
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        # A client that gives up on a hostile answer (a bounded read) breaks the connection: not news.
        self.server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # - state -

    @staticmethod
    def _key(obj: Obj) -> tuple[str, str, str, str]:
        api_version = obj["apiVersion"]
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        meta = obj["metadata"]
        return (group, obj["kind"], meta.get("namespace") or "", meta["name"])

    def add(self, *objs: Obj) -> None:
        for obj in objs:
            kind = self._kind_of(obj)
            stored = _copy(obj)
            if kind.namespaced:
                stored["metadata"].setdefault("namespace", "default")
            self.objects[self._key(stored)] = stored

    def get(self, obj: Obj) -> Obj | None:
        return self.objects.get(self._key(obj))

    def _kind_of(self, obj: Obj) -> Kind:
        for k in KINDS:
            if k.api_version == obj["apiVersion"] and k.kind == obj["kind"]:
                return k
        raise KeyError(f"the fake does not serve {obj['apiVersion']} {obj['kind']}")

    # - faults -

    def fail(self, pattern: str, status: int, times: int = -1) -> None:
        self.faults.append(Fault(re.compile(pattern), "status", status, [times]))

    def slow(self, pattern: str, seconds: float) -> None:
        self.faults.append(Fault(re.compile(pattern), "slow", seconds, [-1]))

    def truncate(self, pattern: str) -> None:
        self.faults.append(Fault(re.compile(pattern), "truncate", 0, [-1]))

    def garble(self, pattern: str) -> None:
        self.faults.append(Fault(re.compile(pattern), "garble", 0, [-1]))

    # - hostile servers (issue 25 item 4): bodies that never end or lie about their size -

    def endless(self, pattern: str) -> None:
        """A chunked body that never ends (zeros inside a JSON string, forever)."""
        self.faults.append(Fault(re.compile(pattern), "endless", 0, [-1]))

    def huge_length(self, pattern: str) -> None:
        """A Content-Length of 1 GiB, then a trickle."""
        self.faults.append(Fault(re.compile(pattern), "huge_length", 0, [-1]))

    def gzip_bomb(self, pattern: str) -> None:
        """Content-Encoding: gzip, ~100 KiB that inflate to 100 MiB."""
        self.faults.append(Fault(re.compile(pattern), "gzip_bomb", 0, [-1]))

    def oversize(self, pattern: str, megabytes: int = 80) -> None:
        """A complete, well-formed JSON answer of that many MiB (a huge dry-run answer)."""
        self.faults.append(Fault(re.compile(pattern), "oversize", megabytes, [-1]))

    def reset(self, pattern: str) -> None:
        """The connection is reset (RST) before any answer."""
        self.faults.append(Fault(re.compile(pattern), "reset", 0, [-1]))

    def bad_list(self, pattern: str, how: str) -> None:
        """A malformed list: ``endless-continue``, ``nameless``, ``list-name`` or ``duplicates``."""
        self.faults.append(Fault(re.compile(pattern), f"list:{how}", 0, [-1]))

    def drip(self, pattern: str, seconds: float = 60.0) -> None:
        """A 200 whose body comes one byte every 0.2 s, for ``seconds`` (then the server gives up)."""
        self.faults.append(Fault(re.compile(pattern), "drip", seconds, [-1]))

    def fault_for(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.pattern.search(f"{method} {path}") and fault.times[0] != 0:
                    if fault.times[0] > 0:
                        fault.times[0] -= 1
                    return fault
        return None

    # - kubeconfig -

    def kubeconfig(self, path: Path, contexts: list[str] | None = None, current: str | None = None,
                   token: str | None = None) -> Path:
        """A real kubeconfig file pointing at this fake, one context per name (all the same server)."""
        names = contexts or ["fake"]
        users = [{"name": "fake-user", "user": {"token": token} if token else {}}]
        doc = {"apiVersion": "v1", "kind": "Config", "preferences": {},
               "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
               "users": users,
               "contexts": [{"name": n, "context": {"cluster": "fake", "user": "fake-user"}} for n in names],
               "current-context": current or names[0]}
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        return path


def kubeconfig(path: Path, servers: dict[str, KubeFake], current: str | None = None) -> Path:
    """A kubeconfig with one context (and cluster entry) per name, each pointing at its own fake."""
    doc = {"apiVersion": "v1", "kind": "Config", "preferences": {},
           "clusters": [{"name": n, "cluster": {"server": f.url}} for n, f in servers.items()],
           "users": [{"name": "fake-user", "user": {}}],
           "contexts": [{"name": n, "context": {"cluster": n, "user": "fake-user"}} for n in servers],
           "current-context": current or next(iter(servers))}
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def _status(code: int, reason: str, message: str) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


_REASONS = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 500: "InternalError", 409: "Conflict",
            415: "UnsupportedMediaType", 422: "Invalid", 503: "ServiceUnavailable"}


def _handler(fake: KubeFake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _hostile(self, fault: Fault) -> bool:
            """Answer as a hostile server would; False if ``fault`` is not one of those."""
            import gzip
            import socket
            import struct

            if fault.kind == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()  # now, before the server's own shutdown would send a FIN
                self.close_connection = True
                return True
            if fault.kind == "drip":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(1 << 20))
                self.end_headers()
                try:
                    for _ in range(int(fault.value / 0.2)):  # bounded: the fake stops by itself
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.2)
                except OSError:
                    pass
                self.close_connection = True
                return True
            if fault.kind == "endless":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"0" * 65536
                try:
                    self.wfile.write(b'{"items": "')
                    while True:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                except OSError:
                    pass
                self.close_connection = True
                return True
            if fault.kind == "huge_length":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(1 << 30))
                self.end_headers()
                try:
                    for _ in range(1 << 14):
                        self.wfile.write(b" " * 65536)
                except OSError:
                    pass
                self.close_connection = True
                return True
            if fault.kind in ("gzip_bomb", "oversize"):
                size = (100 if fault.kind == "gzip_bomb" else int(fault.value)) << 20
                raw = b'{"kind": "Status", "message": "' + b"0" * size + b'"}'
                data = gzip.compress(raw, 9) if fault.kind == "gzip_bomb" else raw
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if fault.kind == "gzip_bomb":
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client stopped reading: that is the point
                    self.wfile.write(data)
                return True
            return False

        @staticmethod
        def _bad_list(how: str, body: Obj) -> Obj:
            items = body.get("items") or []
            if how == "endless-continue":  # empty pages, each pointing at the same next page
                body["metadata"]["continue"] = "again"
                body["items"] = []
            elif how == "nameless" and items:
                del items[0]["metadata"]["name"]
            elif how == "list-name" and items:
                items[0]["metadata"]["name"] = ["a", "b"]
            elif how == "duplicates" and items:
                items.append(_copy(items[0]))
            return body

        def _send(self, code: int, body: Any, fault: Fault | None = None) -> None:
            if fault is not None and fault.kind.startswith("list:") and isinstance(body, dict):
                body = self._bad_list(fault.kind[5:], body)
            data = json.dumps(body).encode()
            if fault is not None and fault.kind == "garble":
                data = data[: max(1, len(data) // 2)] + b"\x00not json"
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            if fault is not None and fault.kind == "truncate":
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, code: int, message: str) -> None:
            self._send(code, _status(code, _REASONS.get(code, "Error"), message))

        def _handle(self, method: str) -> None:
            parsed = urlparse(self.path)
            query = parse_qs(parsed.query)
            path = parsed.path.rstrip("/") or "/"
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with fake.lock:
                fake.requests.append((method, path, query))
            if fake.token is not None and self.headers.get("Authorization") != f"Bearer {fake.token}":
                return self._error(401, "Unauthorized")
            if method == "GET" and path in fake.canned:
                data = fake.canned[path]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return None
            fault = fake.fault_for(method, path)
            if fault is not None and fault.kind == "slow":
                time.sleep(fault.value)
                fault = None
            if fault is not None and fault.kind == "status":
                code = int(fault.value)
                return self._error(code, fake.status_message or f"injected {code} for {path}")
            if fault is not None and self._hostile(fault):
                return None
            try:
                code, answer = self._route(method, path, query, body)
            except KeyError as exc:
                return self._error(404, str(exc))
            self._send(code, answer, fault)

        def do_GET(self) -> None:
            self._measured("GET")

        def do_PATCH(self) -> None:
            self._measured("PATCH")

        def _measured(self, method: str) -> None:
            gauged = fake.gauge_only is None or fake.gauge_only.search(self.path.split("?", 1)[0])
            if fake.gauge is None or not gauged:
                return self._handle(method)
            with fake.gauge:
                return self._handle(method)

        def _route(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, Any]:
            if path == "/version":
                return 200, {"major": "1", "minor": "33", "gitVersion": "v1.33.0-fake", "platform": "linux/amd64"}
            if path == "/api":
                return 200, {"kind": "APIVersions", "versions": ["v1"],
                             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
            if path == "/apis":
                groups = sorted({(k.group, k.version) for k in KINDS if k.group})
                return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                    {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                     "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}} for g, v in groups]}
            parts = path.strip("/").split("/")
            if parts[0] == "api":
                group, version, rest = "", parts[1] if len(parts) > 1 else "", parts[2:]
            elif parts[0] == "apis" and len(parts) >= 2:
                group = parts[1]
                if len(parts) == 2:
                    versions = sorted({k.version for k in KINDS if k.group == group})
                    if not versions:
                        raise KeyError(f"group {group} not served")
                    return 200, {"kind": "APIGroup", "apiVersion": "v1", "name": group,
                                 "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
                                 "preferredVersion": {"groupVersion": f"{group}/{versions[0]}",
                                                      "version": versions[0]}}
                version, rest = parts[2], parts[3:]
            else:
                raise KeyError(path)
            served = [k for k in KINDS if k.group == group and k.version == version]
            if not served:
                raise KeyError(f"{group}/{version} not served")
            gv = f"{group}/{version}" if group else version
            if not rest:
                return 200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
                    {"name": k.plural, "singularName": k.kind.lower(), "namespaced": k.namespaced, "kind": k.kind,
                     "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                     "shortNames": list(k.short)} for k in served]}
            namespace = ""
            if rest[0] == "namespaces" and len(rest) >= 3:
                namespace, rest = rest[1], rest[2:]
            kind = next((k for k in served if k.plural == rest[0]), None)
            if kind is None:
                raise KeyError(f"{rest[0]} not served in {gv}")
            if len(rest) == 1 and method == "GET":
                return 200, self._list(kind, namespace, (query.get("labelSelector") or [""])[0])
            name = rest[1]
            key = (kind.group, kind.kind, namespace if kind.namespaced else "", name)
            if method == "GET":
                obj = fake.objects.get(key)
                if obj is None:
                    return 404, _status(404, "NotFound", f'{kind.plural}.{kind.group or "core"} "{name}" not found')
                return 200, obj
            if method == "PATCH":
                return self._apply(kind, key, query, body)
            raise KeyError(f"{method} {path}")

        def _list(self, kind: Kind, namespace: str, selector: str) -> Obj:
            items = [o for (g, k, ns, _), o in sorted(fake.objects.items())
                     if g == kind.group and k == kind.kind and (not namespace or ns == namespace)
                     and _selector_matches(selector, (o.get("metadata") or {}).get("labels") or {})]
            if kind.group in ("", "apps"):
                items = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in items]
            return {"kind": f"{kind.kind}List", "apiVersion": kind.api_version,
                    "metadata": {"resourceVersion": "99999"}, "items": items}

        def _apply(self, kind: Kind, key: tuple[str, str, str, str], query: dict[str, list[str]],
                   body: bytes) -> tuple[int, Any]:
            if self.headers.get("Content-Type", "").split(";")[0] != "application/apply-patch+yaml":
                return 415, _status(415, "UnsupportedMediaType", "only server-side apply is served")
            manager = (query.get("fieldManager") or [""])[0]
            if not manager:
                return 422, _status(422, "Invalid", "fieldManager is required for apply patch")
            import yaml

            patch = yaml.safe_load(body.decode() or "{}")
            current = fake.objects.get(key)
            merged = server_defaults(_merge(current or {}, patch))
            meta = merged.setdefault("metadata", {})
            if kind.namespaced:
                meta.setdefault("namespace", key[2] or "default")
            meta["resourceVersion"] = str(next(_counter))
            if current is None:
                meta.setdefault("uid", f"6f1c2a4e-0000-4000-8000-{next(_counter):012d}")
                meta.setdefault("creationTimestamp", "2026-12-01T00:00:00Z")
            entries = [m for m in meta.get("managedFields") or [] if m.get("manager") != manager]
            meta["managedFields"] = entries + [{"apiVersion": kind.api_version, "fieldsType": "FieldsV1",
                                                "fieldsV1": {f"f:{k}": {} for k in patch if k != "metadata"},
                                                "manager": manager, "operation": "Apply"}]
            if "All" not in query.get("dryRun", []):
                fake.objects[key] = merged
            return (200 if current is not None else 201), merged

    return Handler


@pytest.fixture
def kube_fake() -> Iterator[KubeFake]:
    fake = KubeFake()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def kube_fakes() -> Iterator[Any]:
    """A factory for several fakes (one per cluster with --all)."""
    started: list[KubeFake] = []

    def start() -> KubeFake:
        fake = KubeFake()
        started.append(fake)
        return fake

    try:
        yield start
    finally:
        for fake in started:
            fake.stop()
