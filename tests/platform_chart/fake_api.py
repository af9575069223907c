"""A minimal Kubernetes API server over real HTTP, standing in for a cluster when helm runs the
chart's ``lookup`` calls (``helm template --dry-run=server``): discovery, /version, and GET of the
objects a helm-unittest suite lists under ``kubernetesProvider``. Read-only; anything else is 404.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _plural(kind: str) -> str:
    lower = kind.lower()
    return lower + ("es" if lower.endswith("s") else "s")


class FakeCluster:
    def __init__(self, objects: list[dict[str, Any]], scheme: dict[str, Any] | None = None,
                 core: bool = True) -> None:
        """``scheme``: helm-unittest ``kubernetesProvider.scheme`` (``group/version/Kind`` -> gvr,
        namespaced); ``core`` adds the v1 ConfigMap/Secret/Namespace resources."""
        self.objects = objects
        # (group, version) -> {plural: (kind, namespaced)}
        self.resources: dict[tuple[str, str], dict[str, tuple[str, bool]]] = {("", "v1"): {
            "configmaps": ("ConfigMap", True), "secrets": ("Secret", True), "namespaces": ("Namespace", False),
        } if core else {}}
        for key, entry in (scheme or {}).items():
            gvr = entry.get("gvr") or {}
            kind = key.rsplit("/", 1)[-1]
            self.resources.setdefault((gvr.get("group", ""), gvr.get("version", "v1")), {})[
                gvr.get("resource", _plural(kind))] = (kind, bool(entry.get("namespaced", True)))
        for obj in objects:
            group, _, version = obj["apiVersion"].rpartition("/")
            self.resources.setdefault((group, version), {}).setdefault(_plural(obj["kind"]), (obj["kind"], True))

    def find(self, group: str, version: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        kind = (self.resources.get((group, version)) or {}).get(plural, (None, False))[0]
        for obj in self.objects:
            meta = obj.get("metadata") or {}
            if obj["kind"] == kind and obj["apiVersion"] == (f"{group}/{version}" if group else version) and \
                    meta.get("name") == name and (meta.get("namespace") or "") == namespace:
                return obj
        return None

    def handle(self, path: str) -> tuple[int, Any]:
        parts = [p for p in path.split("?")[0].split("/") if p]
        if parts == ["version"]:
            return 200, {"major": "1", "minor": "33", "gitVersion": "v1.33.0", "platform": "linux/amd64"}
        if parts == ["api"]:
            return 200, {"kind": "APIVersions", "versions": ["v1"]}
        if parts == ["apis"]:
            groups = sorted({g for g, _ in self.resources if g})
            return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}
                                         for gg, v in self.resources if gg == g],
                 "preferredVersion": {"groupVersion": f"{g}/{next(v for gg, v in self.resources if gg == g)}",
                                      "version": next(v for gg, v in self.resources if gg == g)}}
                for g in groups]}
        if parts[:1] == ["api"]:
            group, rest = "", parts[1:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, rest = parts[1], parts[2:]
        else:
            return 404, None
        version, rest = rest[0], rest[1:]
        if not rest:
            resources = self.resources.get((group, version))
            if resources is None:
                return 404, None
            return 200, {"kind": "APIResourceList", "apiVersion": "v1",
                         "groupVersion": f"{group}/{version}" if group else version,
                         "resources": [{"name": plural, "singularName": kind.lower(), "namespaced": namespaced,
                                        "kind": kind, "verbs": ["get", "list"]}
                                       for plural, (kind, namespaced) in sorted(resources.items())]}
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        if len(rest) == 2:
            found = self.find(group, version, rest[0], namespace, rest[1])
            if found is None:
                return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                             "code": 404, "message": f"{rest[0]} {rest[1]} not found"}
            return 200, found
        if len(rest) == 1:
            kind = (self.resources.get((group, version)) or {}).get(rest[0], ("", False))[0]
            items = [o for o in self.objects if o["kind"] == kind and
                     (not namespace or (o.get("metadata") or {}).get("namespace") == namespace)]
            return 200, {"kind": f"{kind}List", "apiVersion": f"{group}/{version}" if group else version,
                         "metadata": {}, "items": items}
        return 404, None


@contextmanager
def serve(cluster: FakeCluster, folder: Path) -> Iterator[Path]:
    """Run the fake API server; yields a kubeconfig file pointing at it."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            code, body = cluster.handle(self.path)
            data = json.dumps(body if body is not None else {"kind": "Status", "code": code}).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = folder / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake", "namespace": "default"}}],
        "users": [{"name": "fake", "user": {"token": "fake"}}],
    }))
    try:
        yield kubeconfig
    finally:
        server.shutdown()
        server.server_close()
