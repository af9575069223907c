"""What doctor reads from one cluster, through diff's ``ClusterSource`` (the official client, the
kubeconfig context, one deadline for every request with bounded retries, bounded bodies and pages,
and the same fault wording: DIFF-LIVE, DIFF-TIMEOUT, DIFF-CLIENT). Read-only: GET and list, and pod
logs.

Everything is read once into a ``LiveState`` before any check runs, except container logs, which
are read on demand (only a pod whose state matches a documented signature has its log read). Logs
are bounded three ways (issue 32 item 4, issue 34 item 16): ``tailLines`` and ``limitBytes`` on every
read, a total budget for the run, and a few seconds each within the deadline. A log that cannot be
read (403 on ``pods/log``, over the bound, a timeout) is never fatal: it becomes a note on the
finding, whose diagnosis then comes from pod status, node labels and events.

Operator pods are only those of the operator namespace (issue 34 item 17): a list answer holding a
pod of another namespace is dropped, and the verification Job's pods are kept apart.
"""

from __future__ import annotations

import time
from typing import Any

from renderer.doctor import shape
from renderer.doctor.route import NAMESPACE, Route
from renderer.errors import Finding, RenderError
from renderer.model import CLUSTER_LABEL, PACKAGE_API

Obj = dict[str, Any]
LOG_TAIL = 200  # lines: the documented signatures are the last lines a failing container prints
LOG_LIMIT = 256 * 1024  # bytes per log read (limitBytes): 200 lines of a chatty container fit
LOG_BUDGET = 8 * 1024 * 1024  # bytes of logs per cluster: many crashing pods cost at most this
LOG_SECONDS = 5.0  # per log read, within the run's deadline: one slow log must not use all of it
CLUSTER_POLICY_API = "nvidia.com/v1"  # the gpu-operator's ClusterPolicy (cluster-scoped)


class LiveState:
    """The cluster as doctor sees it. ``log(pod, container)`` reads a container's log (the previous
    instance's for a restarted container, as ``kubectl logs --previous``); what kept a log from being
    read is in ``log_notes`` by pod name."""

    def __init__(self, packages: dict[str, Obj], pods: list[Obj], nodes: list[Obj], runtime_classes: list[Obj],
                 events: list[Obj], daemonsets: list[Obj], secrets: dict[str, bool], jobs: list[Obj],
                 reader: Any = None, *, deployments: list[Obj] | None = None,
                 cluster_policies: list[Obj] | None = None, verify_pods: list[Obj] | None = None,
                 verify_events: list[Obj] | None = None, shapeless: list[tuple[str, list[str]]] | None = None) -> None:
        self.packages = packages
        self.pods = pods  # the operator namespace's only
        self.nodes = nodes
        self.runtime_classes = runtime_classes
        self.events = events
        self.daemonsets = daemonsets
        self.secrets = secrets
        self.jobs = jobs
        self.deployments = deployments or []
        self.cluster_policies = cluster_policies or []
        self.verify_pods = verify_pods or []  # the verification Job's namespace
        self.verify_events = verify_events or []
        self.shapeless = shapeless or []  # (object, problems): DOC-SHAPE
        self._reader = reader
        self._logs: dict[tuple[str, str, str, bool], str] = {}
        self.log_notes: dict[str, list[str]] = {}
        # Indexed once (issue 34 item 16): per-node checks look pods up by node, never scan them all.
        self.pods_by_node: dict[str, list[Obj]] = {}
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node:
                self.pods_by_node.setdefault(str(node), []).append(pod)
        self.events_by_object: dict[str, list[Obj]] = {}
        for event in events + self.verify_events:
            name = (event.get("involvedObject") or {}).get("name")
            if name:
                self.events_by_object.setdefault(str(name), []).append(event)

    def log(self, pod: Obj, container: str, previous: bool = False) -> str:
        meta = pod.get("metadata") or {}
        key = (str(meta.get("namespace") or NAMESPACE), str(meta.get("name")), container, previous)
        if key not in self._logs:
            text, note = self._reader.log(*key) if self._reader is not None else ("", None)
            self._logs[key] = text
            if note:
                notes = self.log_notes.setdefault(key[1], [])
                if note not in notes:
                    notes.append(note)
        return self._logs[key]


class _LogDeadline:
    """The run's deadline, shortened to ``LOG_SECONDS`` for one log read."""

    def __init__(self, parent: Any, seconds: float) -> None:
        self.parent = parent
        self.seconds = min(seconds, parent.remaining())
        self.end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return min(self.parent.remaining(), self.end - time.monotonic())


class Reader:
    """Namespaced lists, single GETs and pod logs on top of a ``ClusterSource``."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.log_bytes = 0  # spent of LOG_BUDGET

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[Obj]:
        resource = self.source.resource(api_version, kind)
        if resource is None:
            return []  # the server does not serve the kind (e.g. no Package CRD): nothing of it exists
        try:
            items = self.source._list(resource, None, namespace)  # bounded, paged and validated as diff's lists
        except RenderError as exc:
            raise _with_rbac_hint(exc, f"list {resource.path(namespace).rsplit('/', 1)[-1]}"
                                  + (f" in namespace {namespace}" if namespace else "")) from None
        if namespace is not None:
            # a namespaced list answers for that namespace only; anything else is not ours to read
            items = [o for o in items if (o.get("metadata") or {}).get("namespace") in (None, "", namespace)]
        return items

    def exists(self, api_version: str, kind: str, name: str, namespace: str) -> bool:
        probe = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}}
        try:
            return self.source.get(probe) is not None
        except RenderError as exc:
            raise _with_rbac_hint(exc, f"get {kind.lower()}s in namespace {namespace}") from None

    def log(self, namespace: str, pod: str, container: str, previous: bool) -> tuple[str, str | None]:
        """(the container's log: its last ``LOG_TAIL`` lines, at most ``LOG_LIMIT`` bytes; a note when
        it could not be read). "" when the API server has none (a container that never started, or no
        previous instance: the server answers 400)."""
        from urllib.parse import quote

        which = f"{container}{' (previous)' if previous else ''}"
        if self.log_bytes >= LOG_BUDGET:
            return "", f"log of {which} not read: the {LOG_BUDGET // (1024 * 1024)} MiB log budget is spent"
        what = f"logs of pod {namespace}/{pod} container {which}"
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}/log"
        limit = min(LOG_LIMIT, LOG_BUDGET - self.log_bytes)
        query = [("container", container), ("tailLines", str(LOG_TAIL)), ("limitBytes", str(limit))] + \
            ([("previous", "true")] if previous else [])
        if self.source.deadline.remaining() <= 0:
            return "", f"log of {which} not read: no time left within --timeout"
        parent = self.source.deadline
        # a few seconds each, and never more than a quarter of --timeout: a slow log leaves time for the rest
        self.source.deadline = _LogDeadline(parent, min(LOG_SECONDS, parent.seconds / 4))
        try:
            data = self.source._request(what, "GET", path, query, missing_ok=True, raw=True, missing=(400, 404))
        except RenderError as exc:
            return "", f"log of {which} not read ({_log_fault(exc)}); diagnosed from status"
        finally:
            self.source.deadline = parent
        if data is None:
            return "", None
        data = bytes(data[:limit])  # a server that ignores limitBytes costs no more than the bound
        self.log_bytes += len(data)
        return data.decode("utf-8", errors="replace"), None


def _log_fault(exc: RenderError) -> str:
    finding = exc.findings[0] if exc.findings else None
    message = finding.message if finding else ""
    if finding is not None and finding.code == "DIFF-TIMEOUT":
        return "no answer in the time a log read gets"
    if " 403 " in message:
        return "403 Forbidden: RBAC must allow get pods/log in namespace " + NAMESPACE
    if " 401 " in message:
        return "401 Unauthorized"
    if "-byte limit" in message:
        return "over the response size limit"
    return message.split(": ", 1)[-1].split(" (", 1)[0][:120] or "unreadable"


def _with_rbac_hint(exc: RenderError, needs: str) -> RenderError:
    """diff's 403 hint names diff's verbs; doctor's names the verb and resource it needed."""
    findings = [Finding(f.code, f.message.replace("check RBAC (get, list; patch for --server-side)",
                                                  f"check RBAC: doctor needs {needs}"), f.location, f.severity)
                for f in exc.findings]
    return RenderError(findings, exc.exit_code)


def _conformed(items: list[Obj], kind: str, shapeless: list[tuple[str, list[str]]]) -> list[Obj]:
    for obj in items:
        problems = shape.conform(obj, kind)
        if problems:
            meta = obj.get("metadata") or {}
            ns = meta.get("namespace")
            shapeless.append((f"{kind}/{ns}/{meta.get('name')}" if ns else f"{kind}/{meta.get('name')}", problems))
    return items


def other_clusters(packages: list[Obj], cluster: str) -> list[tuple[str, str]]:
    """(Package, the cluster it is labelled for) of each Package labelled for another cluster: the
    rule diff's ``ClusterSource.fetch`` applies for DIFF-CONTEXT (objects we apply carry the cluster
    label; objects a controller made, with ownerReferences, may carry copies and are not counted)."""
    found = []
    for obj in packages:
        meta: Obj = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
        labels: Obj = meta["labels"] if isinstance(meta.get("labels"), dict) else {}
        owner = meta.get("ownerReferences")
        label = labels.get(CLUSTER_LABEL)
        if label is not None and label != cluster and not owner:
            found.append((str(meta.get("name")), str(label)))
    return sorted(found)


def read_state(source: Any, route: Route, cluster: str | None = None) -> LiveState:
    reader = Reader(source)
    shapeless: list[tuple[str, list[str]]] = []
    listed = reader.list(PACKAGE_API, "Package")
    if cluster is not None:
        _refuse_other_cluster(source, listed, cluster)
    packages = {str(p["metadata"]["name"]): p for p in _conformed(listed, "Package", shapeless)}
    pods = _conformed(reader.list("v1", "Pod", NAMESPACE), "Pod", shapeless)
    nodes = _conformed(reader.list("v1", "Node"), "Node", shapeless)
    runtime_classes = _conformed(reader.list("node.k8s.io/v1", "RuntimeClass"), "RuntimeClass", shapeless)
    events = _conformed(reader.list("v1", "Event", NAMESPACE), "Event", shapeless)
    daemonsets = _conformed(reader.list("apps/v1", "DaemonSet", NAMESPACE), "DaemonSet", shapeless)
    deployments = _conformed(reader.list("apps/v1", "Deployment", NAMESPACE), "Deployment", shapeless)
    policies = _conformed(reader.list(CLUSTER_POLICY_API, "ClusterPolicy"), "ClusterPolicy", shapeless)
    secrets = {name: reader.exists("v1", "Secret", name, NAMESPACE) for name in route.pull_secrets}
    jobs: list[Obj] = []
    verify_pods: list[Obj] = []
    verify_events: list[Obj] = []
    if route.verify_job is not None:
        namespace, _ = route.verify_job
        jobs = _conformed(reader.list("batch/v1", "Job", namespace), "Job", shapeless)
        if namespace == NAMESPACE:
            verify_pods = pods
        else:
            verify_pods = _conformed(reader.list("v1", "Pod", namespace), "Pod", shapeless)
            verify_events = _conformed(reader.list("v1", "Event", namespace), "Event", shapeless)
    return LiveState(packages, pods, nodes, runtime_classes, events, daemonsets, secrets, jobs, reader,
                     deployments=deployments, cluster_policies=policies, verify_pods=verify_pods,
                     verify_events=verify_events, shapeless=shapeless)


def _refuse_other_cluster(source: Any, packages: list[Obj], cluster: str) -> None:
    """DIFF-CONTEXT, worded as diff words it: the wrong cluster is refused before any diagnosis, so
    no fix meant for another cluster is printed (issue 32 item 2)."""
    others = other_clusters(packages, cluster)
    if not others:
        return
    names = sorted({label for _, label in others})
    name, label = others[0]
    raise source._fail("DIFF-CONTEXT", f"{cluster}: {source.where} ({source.shown}) holds objects of cluster "
                       f"{', '.join(names)} (Package/{name} is labelled {CLUSTER_LABEL}={label}), not {cluster}: "
                       "the wrong context? Pass --context, or set live.context in the overlay; nothing was "
                       "diagnosed")
