"""Where the live state comes from: a cluster (the official ``kubernetes`` client), a snapshot of
``kubectl get -o yaml|json`` output, or a committed ``render --out`` folder.

Every source answers the same two questions for one cluster: the live copy of each rendered object
(or None), and the live objects carrying the cluster's label (orphan candidates). Errors are
``RenderError``s with one line naming the object or file; nothing here prints.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from renderer.diff.compare import CLUSTER_LABEL, Key, key_of, ref
from renderer.errors import EXIT_INPUT, Finding, Location, RenderError
from renderer.model import PACKAGE_API

Obj = dict[str, Any]
T = TypeVar("T")

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json")
# Kinds listed for orphans even when the render has none of them left (the last VLAN deleted still
# leaves NADs behind): what cozy-render's features emit.
FEATURE_KINDS = (("cozystack.io/v1alpha1", "Package"), ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"),
                 ("v1", "ConfigMap"), ("apps/v1", "DaemonSet"))


def _error(code: str, message: str, where: Location | None = None) -> RenderError:
    return RenderError([Finding(code, message, where)], EXIT_INPUT)


# --- snapshots and --against folders -------------------------------------------------------------


def snapshot_files(path: Path, *, against: bool) -> list[Path]:
    """The regular files of a snapshot or ``--against`` source, in name order. A symlink that leaves the
    named folder, or any entry that is not a regular file or folder, is an error naming it: its content
    is never read (issue 25 item 2: a committed link to /proc/self/environ must not be printed as
    "live"). The folder is walked without following links."""
    from renderer.load import limits
    from renderer.load.yamlio import display_path

    try:
        top = path.lstat()
    except OSError:
        raise _error("DIFF-SNAPSHOT", f"{display_path(path)}: no such file or folder") from None
    if stat.S_ISLNK(top.st_mode):
        path = path.resolve()  # the path given on the command line may be a link; what it holds may not
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise _error("DIFF-SNAPSHOT", f"{display_path(path)}: not a regular file or folder")
    root = path.resolve()
    files: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in list(dirs):
            if os.path.islink(os.path.join(folder, name)):
                _refuse_link(Path(folder, name), root)
        for name in sorted(names):
            file = Path(folder, name)
            if file.suffix not in SNAPSHOT_SUFFIXES or (against and name == "kustomization.yaml"):
                continue
            mode = file.lstat().st_mode
            if stat.S_ISLNK(mode):
                file = _refuse_link(file, root)  # read the target itself (opened without following links)
                mode = file.stat().st_mode
            if not stat.S_ISREG(mode):
                raise _error("DIFF-SNAPSHOT", "not a regular file (a FIFO, device or socket is never read)",
                             Location(display_path(file)))
            files.append(file)
            if len(files) > limits.MAX_SNAPSHOT_FILES:
                raise _error("DIFF-SNAPSHOT", f"more than {limits.MAX_SNAPSHOT_FILES} files under it",
                             Location(display_path(path)))
    return sorted(files)


def _refuse_link(link: Path, root: Path) -> Path:
    """The target of a link inside ``root``; a link out of it (or a broken or looping one) is an error."""
    from renderer.load.yamlio import display_path

    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):
        raise _error("DIFF-SNAPSHOT", "a broken or looping symlink", Location(display_path(link))) from None
    if target != root and root not in target.parents:
        raise _error("DIFF-SNAPSHOT", "a symlink out of the folder; its content is never read",
                     Location(display_path(link)))
    if target.is_dir():
        raise _error("DIFF-SNAPSHOT", "a symlink to a folder; it is not followed", Location(display_path(link)))
    return target


def _safe_loader() -> Any:
    """libyaml's safe loader: PyYAML's when installed (the live extra), else ruamel.yaml's (the base
    install), so ``--snapshot`` and ``--against`` need no extra."""
    try:
        import yaml

        return getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.YAMLError
    except ImportError:
        from ruamel.yaml import YAMLError
        from ruamel.yaml.cyaml import CSafeLoader

        return CSafeLoader, YAMLError


def _documents(text: str, display: str) -> Iterator[tuple[Any, int]]:
    """(document, 1-based line) for a JSON stream or a YAML multi-document stream."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        decoder = json.JSONDecoder()
        pos = len(text) - len(stripped)
        while pos < len(text):
            try:
                doc, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise _error("DIFF-SNAPSHOT", f"malformed or truncated JSON: {exc.msg}",
                             Location(display, exc.lineno, exc.colno)) from None
            except RecursionError:
                raise _error("DIFF-SNAPSHOT", "JSON nested too deeply", Location(display, *_line_col(text, pos))) \
                    from None
            except ValueError as exc:  # an integer past Python's digit limit
                raise _error("DIFF-SNAPSHOT", f"malformed JSON: {_first_line(exc)}",
                             Location(display, *_line_col(text, pos))) from None
            yield doc, text.count("\n", 0, pos) + 1
            pos = end
            while pos < len(text) and text[pos].isspace():
                pos += 1
        return
    loader_cls, yaml_error = _safe_loader()
    loader = loader_cls(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            line = node.start_mark.line + 1 if node is not None else 1
            try:
                yield loader.construct_document(node), line
            except (ValueError, OverflowError, RecursionError) as exc:  # an integer past Python's limit
                raise _error("DIFF-SNAPSHOT", f"malformed YAML: {_first_line(exc)}", Location(display, line, 1)) \
                    from None
    except yaml_error as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Location(display, mark.line + 1, mark.column + 1) if mark is not None else Location(display)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _error("DIFF-SNAPSHOT", f"malformed or truncated YAML: {problem}", where) from None
    finally:
        loader.dispose()


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


class _Budget:
    """Nodes left for one snapshot source (``limits.MAX_SNAPSHOT_NODES``)."""

    def __init__(self) -> None:
        from renderer.load import limits

        self.nodes = limits.MAX_SNAPSHOT_NODES


def _check_tree(doc: Any, display: str, line: int, budget: _Budget) -> None:
    """kubectl never writes anchors or aliases: a map or list reached twice (an alias, a recursive
    alias) is refused, as are nesting past ``limits.MAX_DEPTH``, integers outside int64/uint64 and
    more nodes than the budget. Iterative, so no input can exhaust the interpreter's stack."""
    from renderer.load import limits

    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(doc, 1)]
    nodes = budget.nodes
    while stack:
        node, depth = stack.pop()
        nodes -= 1
        if isinstance(node, (dict, list)):
            if id(node) in seen:
                raise _error("DIFF-SNAPSHOT", "a YAML alias (or a recursive one): kubectl get output has none",
                             Location(display, line, 1))
            seen.add(id(node))
            if depth > limits.MAX_DEPTH:
                raise _error("DIFF-SNAPSHOT", f"nested deeper than {limits.MAX_DEPTH} levels",
                             Location(display, line, 1))
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
            if isinstance(node, dict):
                nodes -= len(node)  # the keys
        elif isinstance(node, int) and not isinstance(node, bool) and not limits.INT_MIN <= node <= limits.INT_MAX:
            raise _error("DIFF-SNAPSHOT", "an integer outside the int64/uint64 range", Location(display, line, 1))
        if nodes < 0:
            raise _error("DIFF-SNAPSHOT", f"more than {limits.MAX_SNAPSHOT_NODES} nodes in this source",
                         Location(display, line, 1))
    budget.nodes = nodes


def _objects(doc: Any, display: str, line: int) -> Iterator[Obj]:
    if doc is None:
        return
    if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
        items = doc["items"]
        if not isinstance(items, list):
            raise _error("DIFF-SNAPSHOT", f"{doc.get('kind')}.items is not a list", Location(display, line, 1))
        for item in items:
            yield from _objects(item, display, line)
        return
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    if not (isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and doc.get("apiVersion")
            and isinstance(doc.get("kind"), str) and doc.get("kind") and isinstance(meta, dict)
            and isinstance(meta.get("name"), str) and meta.get("name")
            and isinstance(meta.get("namespace") or "", str)):
        raise _error("DIFF-SNAPSHOT", "not a Kubernetes object with apiVersion, kind and metadata.name "
                     "(a truncated dump?)", Location(display, line, 1))
    yield doc


def _read(file: Path, display: str, total: list[int]) -> str:
    from renderer.load import limits

    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _error("DIFF-SNAPSHOT", f"cannot read: {exc.strerror}", Location(display)) from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _error("DIFF-SNAPSHOT", "not a regular file", Location(display))
        if st.st_size > limits.MAX_SNAPSHOT_FILE_BYTES:
            raise _error("DIFF-SNAPSHOT", f"file is {st.st_size} bytes; the limit is "
                         f"{limits.MAX_SNAPSHOT_FILE_BYTES}", Location(display, 1, 1))
        total[0] += st.st_size
        if total[0] > limits.MAX_SNAPSHOT_BYTES:
            raise _error("DIFF-SNAPSHOT", f"the files add up to more than {limits.MAX_SNAPSHOT_BYTES} bytes",
                         Location(display, 1, 1))
        data = handle.read(limits.MAX_SNAPSHOT_FILE_BYTES + 1)
    if len(data) > limits.MAX_SNAPSHOT_FILE_BYTES:
        raise _error("DIFF-SNAPSHOT", f"file grew past {limits.MAX_SNAPSHOT_FILE_BYTES} bytes while read",
                     Location(display, 1, 1))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error("DIFF-SNAPSHOT", f"not UTF-8 (byte {exc.start})", Location(display)) from None


def load_snapshot(path: Path, *, against: bool = False) -> dict[Key, Obj]:
    """Every object under ``path``, by key. The same object twice is an error: which one is live?"""
    from renderer.load.yamlio import display_path

    index: dict[Key, Obj] = {}
    seen: dict[Key, str] = {}
    budget = _Budget()
    total = [0]
    for file in snapshot_files(path, against=against):
        display = display_path(file)
        text = _read(file, display, total)
        for doc, line in _documents(text, display):
            _check_tree(doc, display, line, budget)
            for obj in _objects(doc, display, line):
                key = key_of(obj)
                if key in index:
                    raise _error("DIFF-SNAPSHOT", f"{ref(key)} appears twice (first in {seen[key]})",
                                 Location(display, line, 1))
                index[key] = obj
                seen[key] = f"{display}:{line}"
    return index


class SnapshotSource:
    """Live state read from files. An object the render has without a namespace matches a
    snapshot object in namespace ``default``, as kubectl would have applied it there."""

    def __init__(self, index: dict[Key, Obj]) -> None:
        self.index = index

    def fetch(self, desired: list[Obj], cluster: str) -> tuple[dict[Key, Obj | None], list[Obj]]:
        live: dict[Key, Obj | None] = {}
        for obj in desired:
            key = key_of(obj)
            found = self.index.get(key)
            if found is None and not key[2]:
                found = self.index.get((key[0], key[1], "default", key[3]))
            live[key] = found
        labelled = [o for o in self.index.values()
                    if ((o.get("metadata") or {}).get("labels") or {}).get(CLUSTER_LABEL) == cluster]
        return live, labelled

    def packages(self) -> list[Obj]:
        """Every live Package (``--effective``: the platform's own carry no label of ours)."""
        return [o for o in self.index.values() if o.get("apiVersion") == PACKAGE_API and o.get("kind") == "Package"]


# --- a cluster -----------------------------------------------------------------------------------

RETRIES = 3  # attempts per request, for 429/5xx and dropped connections; all under the one deadline
BACKOFF = 0.2  # seconds, doubled per attempt


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()


def kubeconfig_path(explicit: Path | None) -> str | None:
    if explicit is not None:
        return str(explicit)
    env = os.environ.get("KUBECONFIG")
    if env:
        return env
    default = Path("~/.kube/config").expanduser()
    return str(default) if default.exists() else None


def contexts(kubeconfig: str | None) -> tuple[list[str], str | None]:
    """Context names in the kubeconfig and the current one."""
    from kubernetes import config

    if kubeconfig is None:
        return [], None
    try:
        found, current = config.list_kube_config_contexts(config_file=kubeconfig)
    except Exception as exc:  # noqa: BLE001 - the client raises bare Exceptions and ConfigExceptions here
        raise _error("DIFF-CLIENT", f"cannot read kubeconfig {kubeconfig}: {exc}") from None
    return [c["name"] for c in found or []], (current or {}).get("name")


class ClusterSource:
    """One cluster's API server through the official client (DynamicClient over the kubeconfig).

    All requests share one ``Deadline``; each request gets what is left of it as its timeout, and a
    retryable failure (429, 5xx, a dropped connection) is retried at most ``RETRIES`` times."""

    def __init__(self, kubeconfig: str | None, context: str | None, deadline: Deadline, cache_dir: Path,
                 field_manager: str = "cozy-render") -> None:
        from kubernetes import client, config

        self.deadline = deadline
        self.field_manager = field_manager
        self.context = context
        configuration = client.Configuration()
        try:
            if kubeconfig is None:
                if not os.environ.get("KUBERNETES_SERVICE_HOST"):
                    raise _error("DIFF-CLIENT", "no kubeconfig: set --kubeconfig or KUBECONFIG, create "
                                 "~/.kube/config, or run in a pod with a service account")
                config.load_incluster_config(client_configuration=configuration)
                self.where = "in-cluster service account"
            else:
                config.load_kube_config(config_file=kubeconfig, context=context,
                                        client_configuration=configuration, persist_config=False)
                self.where = f"context {context}" if context else "the current context"
        except RenderError:
            raise
        except Exception as exc:  # noqa: BLE001 - ConfigException and friends; say which kubeconfig
            raise _error("DIFF-CLIENT", f"cannot load {kubeconfig or 'in-cluster config'}"
                         f"{f' context {context}' if context else ''}: {exc}") from None
        configuration.retries = 0  # our own bounded retries, under the deadline
        self.host = configuration.host
        self.api = client.ApiClient(configuration)
        self.cache_dir = cache_dir
        self.cache_file = str(cache_dir / "discovery.json")
        self._dynamic: Any = None
        self._resources: dict[tuple[str, str], Any] = {}

    def close(self) -> None:
        """Close pooled connections (and remove the discovery cache)."""
        import shutil

        pool = getattr(getattr(self.api, "rest_client", None), "pool_manager", None)
        if pool is not None:
            pool.clear()
        shutil.rmtree(self.cache_dir, ignore_errors=True)

    # - plumbing -

    def _call(self, what: str, fn: Callable[[float], T]) -> T:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        delay = BACKOFF
        for attempt in range(1, RETRIES + 1):
            remaining = self.deadline.remaining()
            if remaining <= 0:
                raise self._timeout(what)
            try:
                return fn(remaining)
            except ApiException as exc:
                status = getattr(exc, "status", None) or 0
                if status in (401, 403):
                    raise _error("DIFF-LIVE", f"{what}: {status} {_reason(exc)} from {self.host} ({self.where}); "
                                 "check the credentials and RBAC (get, list; patch for --server-side)") from None
                if (status == 429 or status >= 500) and attempt < RETRIES:
                    self._sleep(delay, what)
                    delay *= 2
                    continue
                raise _error("DIFF-LIVE", f"{what}: {status} {_reason(exc)} from {self.host} ({self.where})") \
                    from None
            except HTTPError as exc:
                text = str(exc)
                timed_out = "timed out" in text.lower() or "timeout" in type(exc).__name__.lower()
                if timed_out and self.deadline.remaining() <= 0.05:
                    raise self._timeout(what) from None
                truncated = "IncompleteRead" in text or "ProtocolError" in type(exc).__name__
                if attempt < RETRIES and not truncated:
                    self._sleep(delay, what)
                    delay *= 2
                    continue
                detail = "truncated response" if truncated else _short(text)
                raise _error("DIFF-LIVE", f"{what}: {detail} ({self.host}, {self.where})") from None
            except OSError as exc:
                raise _error("DIFF-LIVE", f"{what}: {exc} ({self.host}, {self.where})") from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _sleep(self, delay: float, what: str) -> None:
        if self.deadline.remaining() <= delay:
            raise self._timeout(what)
        time.sleep(delay)

    def _timeout(self, what: str) -> RenderError:
        return _error("DIFF-TIMEOUT", f"{what}: no answer from {self.host} ({self.where}) within "
                      f"--timeout {self.deadline.seconds:g}s")

    def _json(self, what: str, response: Any) -> Any:
        try:
            return json.loads(response.data)
        except ValueError:
            raise _error("DIFF-LIVE", f"{what}: truncated or malformed JSON from {self.host} ({self.where})") \
                from None

    def _object(self, what: str, body: Any) -> Obj:
        if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
            raise _error("DIFF-LIVE", f"{what}: malformed response (not a Kubernetes object) from {self.host} "
                         f"({self.where})")
        return body

    def _client(self) -> Any:
        if self._dynamic is None:
            from kubernetes import dynamic

            self._dynamic = self._call("API discovery", lambda _t: self._discovering(
                "API discovery", lambda: dynamic.DynamicClient(self.api, cache_file=self.cache_file)))
        return self._dynamic

    def _discovering(self, what: str, fn: Callable[[], T]) -> T:
        # The client parses discovery itself and, on a body that is not JSON, goes on with a string
        # (``meta_request`` returns the raw text) until an attribute lookup fails: malformed input.
        try:
            return fn()
        except (ValueError, AttributeError, TypeError, KeyError):
            raise _error("DIFF-LIVE", f"{what}: malformed discovery response from {self.host} ({self.where})") \
                from None

    def resource(self, api_version: str, kind: str) -> Any:
        """The discovered resource, or None if the server does not serve that kind."""
        from kubernetes.dynamic.exceptions import ResourceNotFoundError

        cache_key = (api_version, kind)
        if cache_key not in self._resources:
            dc = self._client()

            what = f"discovery of {kind} ({api_version})"

            def lookup() -> Any:
                try:
                    return dc.resources.get(api_version=api_version, kind=kind)
                except ResourceNotFoundError:
                    return None

            self._resources[cache_key] = self._call(what, lambda _t: self._discovering(what, lookup))
        return self._resources[cache_key]

    # - what diff asks -

    def get(self, obj: Obj) -> Obj | None:
        from kubernetes.dynamic.exceptions import NotFoundError

        key = key_of(obj)
        resource = self.resource(str(obj["apiVersion"]), key[1])
        if resource is None:
            return None  # the kind is not served (its CRD is not installed): the object is to create
        namespace = (key[2] or "default") if resource.namespaced else None
        what = ref(key)

        def get(timeout: float) -> Obj | None:
            try:
                response = resource.get(name=key[3], namespace=namespace, serialize=False,
                                        _request_timeout=timeout)
            except NotFoundError:
                return None
            return self._object(what, self._json(what, response))

        return self._call(what, get)

    def list_labelled(self, api_version: str, kind: str, cluster: str) -> list[Obj]:
        return self._list(api_version, kind, f"{CLUSTER_LABEL}={cluster}")

    def packages(self) -> list[Obj]:
        """Every live Package (``--effective``: the platform's own carry no label of ours)."""
        return self._list(PACKAGE_API, "Package", None)

    def _list(self, api_version: str, kind: str, selector: str | None) -> list[Obj]:
        resource = self.resource(api_version, kind)
        if resource is None:
            return []
        what = f"list {kind} -l {selector}" if selector else f"list {kind}"

        def list_(timeout: float) -> list[Obj]:
            options = {"label_selector": selector} if selector else {}
            response = resource.get(serialize=False, _request_timeout=timeout, **options)
            body = self._json(what, response)
            items = body.get("items") if isinstance(body, dict) else None
            if not isinstance(items, list):
                raise _error("DIFF-LIVE", f"{what}: malformed list response (no items) from {self.host}")
            for item in items:  # items of built-in kinds omit apiVersion and kind
                self._object(what, item)
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", kind)
            return items

        return self._call(what, list_)

    def dry_run_apply(self, obj: Obj) -> Obj:
        """The object as the API server would store it after a server-side apply under our field
        manager (``dryRun=All``: nothing is written)."""
        key = key_of(obj)
        resource = self.resource(str(obj["apiVersion"]), key[1])
        what = f"server-side dry-run of {ref(key)}"
        if resource is None:
            raise _error("DIFF-LIVE", f"{what}: the server does not serve {key[1]} ({obj['apiVersion']}); "
                         "install its CRD first")
        namespace = (key[2] or "default") if resource.namespaced else None

        def apply(timeout: float) -> Obj:
            response = resource.server_side_apply(body=obj, name=key[3], namespace=namespace,
                                                  field_manager=self.field_manager, force_conflicts=True,
                                                  dry_run="All", serialize=False, _request_timeout=timeout)
            return self._object(what, self._json(what, response))

        return self._call(what, apply)

    def fetch(self, desired: list[Obj], cluster: str) -> tuple[dict[Key, Obj | None], list[Obj]]:
        """One label-selected list per kind (the cluster's objects, for orphans and as the live copy of
        everything already synced), then a GET only for rendered objects the lists did not hold
        (never synced, or not labelled yet: a patch target before its first apply)."""
        kinds = dict.fromkeys([(str(o["apiVersion"]), str(o["kind"])) for o in desired] + list(FEATURE_KINDS))
        labelled: list[Obj] = []
        for api_version, kind in kinds:
            labelled.extend(self.list_labelled(api_version, kind, cluster))
        listed = {key_of(o): o for o in labelled}
        live: dict[Key, Obj | None] = {}
        for obj in desired:
            key = key_of(obj)
            found = listed.get(key) or (listed.get((key[0], key[1], "default", key[3])) if not key[2] else None)
            live[key] = found if found is not None else self.get(obj)
        return live, labelled


def _reason(exc: Any) -> str:
    reason = getattr(exc, "reason", "") or ""
    body = getattr(exc, "body", None)
    message = ""
    if body:
        try:
            message = json.loads(body).get("message", "")
        except (ValueError, AttributeError, TypeError):
            message = ""
    return f"{reason}: {message}" if message else str(reason)


def _short(text: str) -> str:
    # urllib3 errors repeat the pool and the URL; keep the cause (e.g. "Connection refused").
    for marker in ("Connection refused", "Name or service not known", "certificate verify failed",
                   "timed out", "Connection reset"):
        if marker in text:
            return marker.lower() if marker != "Connection refused" else "connection refused"
    cause = text.split("Caused by ", 1)[-1] if "Caused by " in text else text
    return cause.splitlines()[0].rstrip(")")[:200]
