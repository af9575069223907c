"""What doctor reads from one cluster, through diff's ``ClusterSource`` (the official client, the
kubeconfig context, one deadline for every request with bounded retries, and the same fault
wording: DIFF-LIVE, DIFF-TIMEOUT, DIFF-CLIENT). Read-only: GET and list, and pod logs.

Everything is read once into a ``LiveState`` before any check runs, except container logs, which
are read on demand (only a pod whose state matches a documented signature has its log read).
"""

from __future__ import annotations

from typing import Any

from renderer.doctor.route import NAMESPACE, Route
from renderer.model import PACKAGE_API

Obj = dict[str, Any]
LOG_TAIL = 200  # lines: the documented signatures are the last lines a failing container prints


class LiveState:
    """The cluster as doctor sees it. ``log(pod, container)`` reads a container's log (the previous
    instance's for a restarted container, as ``kubectl logs --previous``)."""

    def __init__(self, packages: dict[str, Obj], pods: list[Obj], nodes: list[Obj], runtime_classes: list[Obj],
                 events: list[Obj], daemonsets: list[Obj], secrets: dict[str, bool], jobs: list[Obj],
                 reader: Any = None) -> None:
        self.packages = packages
        self.pods = pods
        self.nodes = nodes
        self.runtime_classes = runtime_classes
        self.events = events
        self.daemonsets = daemonsets
        self.secrets = secrets
        self.jobs = jobs
        self._reader = reader
        self._logs: dict[tuple[str, str, str, bool], str] = {}

    def log(self, pod: Obj, container: str, previous: bool = False) -> str:
        meta = pod.get("metadata") or {}
        key = (str(meta.get("namespace") or NAMESPACE), str(meta.get("name")), container, previous)
        if key not in self._logs:
            self._logs[key] = self._reader.log(*key) if self._reader is not None else ""
        return self._logs[key]


class Reader:
    """Namespaced lists, single GETs and pod logs on top of a ``ClusterSource``."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[Obj]:
        resource = self.source.resource(api_version, kind)
        if resource is None:
            return []  # the server does not serve the kind (e.g. no Package CRD): nothing of it exists
        return self.source._list(resource, None, namespace)  # bounded, paged and validated as diff's lists

    def exists(self, api_version: str, kind: str, name: str, namespace: str) -> bool:
        probe = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}}
        return self.source.get(probe) is not None

    def log(self, namespace: str, pod: str, container: str, previous: bool) -> str:
        """The container's log (its last ``LOG_TAIL`` lines), or "" when the API server has none (a
        container that never started, or no previous instance: the server answers 400)."""
        from urllib.parse import quote

        what = f"logs of pod {namespace}/{pod} container {container}" + (" (previous)" if previous else "")
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}/log"
        query = [("container", container), ("tailLines", str(LOG_TAIL))] + ([("previous", "true")] if previous else [])
        data = self.source._request(what, "GET", path, query, missing_ok=True, raw=True, missing=(400, 404))
        return "" if data is None else data.decode("utf-8", errors="replace")


def read_state(source: Any, route: Route) -> LiveState:
    reader = Reader(source)
    packages = {str(p["metadata"]["name"]): p for p in reader.list(PACKAGE_API, "Package")}
    pods = reader.list("v1", "Pod", NAMESPACE)
    nodes = reader.list("v1", "Node")
    runtime_classes = reader.list("node.k8s.io/v1", "RuntimeClass")
    events = reader.list("v1", "Event", NAMESPACE)
    daemonsets = reader.list("apps/v1", "DaemonSet", NAMESPACE)
    secrets = {name: reader.exists("v1", "Secret", name, NAMESPACE) for name in route.pull_secrets}
    jobs: list[Obj] = []
    if route.verify_job is not None:
        namespace, _ = route.verify_job
        jobs = reader.list("batch/v1", "Job", namespace)
        pods += [p for p in reader.list("v1", "Pod", namespace) if namespace != NAMESPACE]
        events += [e for e in reader.list("v1", "Event", namespace) if namespace != NAMESPACE]
    return LiveState(packages, pods, nodes, runtime_classes, events, daemonsets, secrets, jobs, reader)
