"""Where the live state comes from: a cluster (the official ``kubernetes`` client), a snapshot of
``kubectl get -o yaml|json`` output, or a committed ``render --out`` folder.

Every source answers the same two questions for one cluster: the live copy of each rendered object
(or None), and the live objects carrying the cluster's label (orphan candidates). Errors are
``RenderError``s with one line naming the object or file; nothing here prints.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from urllib.parse import quote, urlencode

from renderer.diff import snapshot_yaml
from renderer.diff.compare import CLUSTER_LABEL, Key, key_of, ref
from renderer.errors import EXIT_INPUT, Finding, Location, RenderError
from renderer.fanout import Deadline
from renderer.load import limits
from renderer.load.yamlio import display_path
from renderer.model import PACKAGE_API

Obj = dict[str, Any]
T = TypeVar("T")

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json")


def _error(code: str, message: str, where: Location | None = None) -> RenderError:
    return RenderError([Finding(code, message, where)], EXIT_INPUT)


# --- snapshots and --against folders -------------------------------------------------------------


def snapshot_files(path: Path, *, against: bool) -> list[Path]:
    """The regular files of a snapshot or ``--against`` source, in name order. A symlink that leaves the
    named folder, or any entry that is not a regular file or folder, is an error naming it: its content
    is never read (issue 25 item 2: a committed link to /proc/self/environ must not be printed as
    "live"). The folder is walked without following links."""
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
    for folder, dirs, names in os.walk(root):  # top-down: a folder too deep is refused before os.walk recurses
        if len(Path(folder).relative_to(root).parts) > limits.MAX_DEPTH:
            raise _error("DIFF-SNAPSHOT", f"folders nested more than {limits.MAX_DEPTH} deep under it",
                         Location(display_path(path)))
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
                raise _error("DIFF-SNAPSHOT", f"malformed JSON: {_number_problem(exc)}",
                             Location(display, *_line_col(text, pos))) from None
            yield doc, text.count("\n", 0, pos) + 1
            pos = end
            while pos < len(text) and text[pos].isspace():
                pos += 1
        return

    yaml_error = snapshot_yaml.parser_error()
    try:
        yield from snapshot_yaml.documents(text)
    except snapshot_yaml.Refused as exc:
        raise _error("DIFF-SNAPSHOT", exc.message, Location(display, exc.line, 1)) from None
    except yaml_error as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Location(display, mark.line + 1, mark.column + 1) if mark is not None else Location(display)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _error("DIFF-SNAPSHOT", f"malformed or truncated YAML: {problem}", where) from None


def _number_problem(exc: BaseException) -> str:
    """What was wrong, in our words: Python's own text about its digit limit names a setting of the
    interpreter (issue 25 item 10: no library noise in a message)."""
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return "an integer with thousands of digits (Kubernetes integers are 64-bit)"
    if isinstance(exc, OverflowError):
        return "a number out of range"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return _first_line(exc)


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


class _Budget:
    """Nodes left for one snapshot source (``limits.MAX_SNAPSHOT_NODES``)."""

    def __init__(self) -> None:
        self.nodes = limits.MAX_SNAPSHOT_NODES


def _check_tree(doc: Any, display: str, line: int, budget: _Budget) -> None:
    """kubectl never writes anchors or aliases: a map or list reached twice (an alias, a recursive
    alias) is refused, as are nesting past ``limits.MAX_DEPTH``, integers outside int64/uint64 and
    more nodes than the budget. Iterative, so no input can exhaust the interpreter's stack."""
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(doc, 1)] if isinstance(doc, (dict, list)) else []
    nodes = budget.nodes - 1
    low, high = limits.INT_MIN, limits.INT_MAX
    while stack:  # only containers are pushed: scalars, most of the nodes, are checked in place
        node, depth = stack.pop()
        if id(node) in seen:
            raise _error("DIFF-SNAPSHOT", "a YAML alias (or a recursive one): kubectl get output has none",
                         Location(display, line, 1))
        seen.add(id(node))
        if depth > limits.MAX_DEPTH:
            raise _error("DIFF-SNAPSHOT", f"nested deeper than {limits.MAX_DEPTH} levels", Location(display, line, 1))
        children = node.values() if node.__class__ is dict else node
        nodes -= 2 * len(children) if node.__class__ is dict else len(children)
        if nodes < 0:
            raise _error("DIFF-SNAPSHOT", f"more than {limits.MAX_SNAPSHOT_NODES} nodes in this source",
                         Location(display, line, 1))
        for child in children:
            cls = child.__class__
            if cls is dict or cls is list:
                stack.append((child, depth + 1))
            elif cls is int and not low <= child <= high:
                raise _error("DIFF-SNAPSHOT", "an integer outside the int64/uint64 range", Location(display, line, 1))
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

    def __init__(self, index: dict[Key, Obj], origin: str = "a snapshot") -> None:
        self.index = index
        self.origin = origin

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
    config, _configuration, _rest = client_parts()

    if kubeconfig is None:
        return [], None
    try:
        found, current = config.list_kube_config_contexts(config_file=kubeconfig)
    except Exception as exc:  # noqa: BLE001 - the client raises bare Exceptions and ConfigExceptions here
        raise _error("DIFF-CLIENT", f"cannot read kubeconfig {kubeconfig}: {exc}") from None
    return [c["name"] for c in found or []], (current or {}).get("name")


def connect(cluster: str, kubeconfig: Path | None, context: str | None, deadline: Deadline, *,
            fleet: bool = False, field_manager: str = "cozy-render") -> ClusterSource:
    """The connection to one cluster, as ``diff`` and ``doctor`` choose it: ``kubeconfig`` as given, else
    KUBECONFIG, ``~/.kube/config`` or the in-cluster service account; ``context`` as given (``--context``
    or the overlay's ``live.context``), else the cluster's own context when the kubeconfig has one, else
    the current context. A fleet (``fleet``, ``--all``) always takes the cluster's own: it must never
    read one cluster twice."""
    path = kubeconfig_path(kubeconfig)
    if path is not None:
        names, current = contexts(path)
        if context is None:
            context = cluster if (cluster in names or fleet) else current
        if context is None:
            raise _error("DIFF-CLIENT", f"{cluster}: kubeconfig {path} has no current context and "
                         f"none named {cluster!r}; pass --context")
        if context not in names:
            raise _error("DIFF-CLIENT", f"{cluster}: kubeconfig {path} has no context "
                         f"{context!r} (set live.context in the overlay, or --context)")
    return ClusterSource(path, context, deadline, field_manager)


def client_parts() -> tuple[Any, Any, Any]:
    """``kubernetes.config``, ``kubernetes.client.configuration`` and ``kubernetes.client.rest``, without
    the rest of the client (issue 18 item 9: import only what the diff needs). The ``kubernetes`` and
    ``kubernetes.client`` package ``__init__``s import every API class and ~700 models (seconds of
    start-up); diff needs the kubeconfig loader (contexts, TLS, tokens, exec plugins), Configuration
    and the urllib3 pool. The packages are stood in for while those modules load, then removed, so a
    later ``import kubernetes`` anywhere in the process still runs the real packages (which reuse the
    modules loaded here)."""
    # The client logs through the root logger (exec_provider: "exec: process returned -9" when an
    # exec plugin is killed at the deadline); with no handler, Python's last resort would print that
    # library noise beside the one located error line. The error itself is cozy-render's to word.
    logging.getLogger().addHandler(_QUIET)
    # Clusters are read in threads (diff --all, doctor --all): one at a time swaps the stand-ins in.
    with _CLIENT_PARTS_LOCK:
        return _client_parts()


_CLIENT_PARTS_LOCK = threading.Lock()
_QUIET = logging.NullHandler()


def _client_parts() -> tuple[Any, Any, Any]:
    import importlib
    import importlib.machinery
    import importlib.util
    import sys
    import types

    if "kubernetes.client" in sys.modules and hasattr(sys.modules["kubernetes.client"], "ApiClient"):
        from kubernetes import config
        from kubernetes.client import configuration, rest

        return config, configuration, rest
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or spec.origin is None:
        raise ImportError("kubernetes")
    root = Path(spec.origin).parent
    placed = []
    for name, folder in (("kubernetes", root), ("kubernetes.client", root / "client"), ("kubernetes.utils",
                                                                                       root / "utils")):
        if name not in sys.modules:
            stand_in = types.ModuleType(name)
            stand_in.__path__ = [str(folder)]
            # a spec, so a find_spec("kubernetes") elsewhere meanwhile answers instead of raising
            stand_in.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
            stand_in.__spec__.submodule_search_locations = [str(folder)]
            sys.modules[name] = stand_in
            placed.append(name)
    try:
        configuration = importlib.import_module("kubernetes.client.configuration")
        rest = importlib.import_module("kubernetes.client.rest")
        client = sys.modules["kubernetes.client"]
        if "kubernetes.client" in placed:
            client.Configuration = configuration.Configuration  # type: ignore[attr-defined]
            client.ApiClient = None  # type: ignore[attr-defined]  # only new_client_from_config uses it
        config = importlib.import_module("kubernetes.config")
    finally:
        for name in placed:
            sys.modules.pop(name, None)
    return config, configuration, rest


class Resource(NamedTuple):
    """One kind the API server serves (a discovery entry)."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    verbs: frozenset[str]

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = f"/api/{self.api_version}" if "/" not in self.api_version else f"/apis/{self.api_version}"
        if namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        return base + (f"/{quote(name, safe='')}" if name else "")


LIST_CONCURRENCY = 8  # list and discovery requests in flight at once, per cluster
LIST_PAGE = 500  # items per list page (`limit`), as kubectl's chunking does
CHUNK = 64 * 1024
UNAVAILABLE = object()  # a group version the server lists but cannot serve now


class _Fault(Exception):
    """A transport failure, already worded; ``retry`` when another attempt may succeed."""

    def __init__(self, detail: str, retry: bool, timeout: bool = False) -> None:
        super().__init__(detail)
        self.detail, self.retry, self.timeout = detail, retry, timeout


class ClusterSource:
    """One cluster's API server over plain HTTP requests through the official client's connection
    pool and authentication (the kubeconfig's TLS settings, tokens, client certificates and exec
    plugins, which run as kubectl runs them).

    Every request shares one ``Deadline`` (its socket timeouts are what is left of it, and a body is
    read in chunks with the deadline checked between them), every body is read up to
    ``limits.MAX_RESPONSE_BYTES`` after decompression, a retryable failure (429, 5xx, a reset or
    refused connection) is retried at most ``RETRIES`` times, and each fault is worded by what it
    is: refused, reset, truncated, timeout, 401, 403, 5xx, malformed. ``requests`` counts them."""

    def __init__(self, kubeconfig: str | None, context: str | None, deadline: Deadline,
                 field_manager: str = "cozy-render") -> None:
        config, configuration_module, rest = client_parts()

        self.deadline = deadline
        self.field_manager = field_manager
        self.context = context
        self.requests = 0
        configuration = configuration_module.Configuration()
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
                         f"{f' context {context}' if context else ''}: {_load_failure(exc, configuration)}") from None
        self.host = configuration.host.rstrip("/")
        self.shown = shown_url(self.host)  # what messages print: no userinfo, no query (issue 34 item 18)
        self.configuration = configuration
        self.secrets: set[str] = set()
        self._remember_secrets()
        self.pool = rest.RESTClientObject(configuration).pool_manager  # TLS, client certificates, proxies
        self._lock = threading.Lock()
        self._resources: dict[tuple[str, str], Resource] | None = None
        self._preferred: dict[str, str] = {}  # group -> preferred groupVersion
        self._failed_groups: dict[str, str] = {}  # groupVersion -> why its discovery failed
        self.skipped: list[str] = []  # kinds whose orphans could not be searched, and why

    def _auth_headers(self) -> dict[str, str]:
        """The credential headers, trimmed as kubectl trims a token (an echoed token file, a block scalar
        or an exec plugin's output ends in a newline); one still holding a line break or NUL is refused
        without printing it."""
        headers = {}
        for setting in self.configuration.auth_settings().values():
            value = setting.get("value")
            if setting.get("in") != "header" or not isinstance(value, str) or not value:
                continue
            scheme, _, credential = value.partition(" ")
            value = f"{scheme} {credential.strip()}" if credential else value.strip()
            if any(c in value for c in "\r\n\0"):
                raise _error("DIFF-CLIENT", f"the kubeconfig's credential for {self.shown} holds a line break or "
                             "NUL inside it; no header can carry it")
            headers[setting["key"]] = value
            self.secrets.update(part for part in (value, credential.strip(), value.strip()) if len(part) >= 4)
        return headers

    def _remember_secrets(self) -> None:
        """Every credential value this source knows, to mask in any message (a server's own error body
        may quote the Authorization header)."""
        configuration = self.configuration
        for value in (*(configuration.api_key or {}).values(), configuration.password,
                      *_url_secrets(configuration.host)):
            if isinstance(value, str) and value.strip():
                text = value.strip()
                self.secrets.update(p for p in (text, text.partition(" ")[2].strip()) if len(p) >= 4)

    def mask(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
        return text

    def _fail(self, code: str, message: str) -> RenderError:
        return _error(code, self.mask(message))

    def close(self) -> None:
        """Close pooled connections."""
        self.pool.clear()

    # - plumbing -

    def _once(self, method: str, path: str, query: list[tuple[str, str]], body: bytes | None,
              content_type: str | None) -> tuple[int, bytes]:
        import urllib3
        from urllib3 import exceptions as u3

        headers = {"Accept": "application/json", "User-Agent": "cozy-render", "Accept-Encoding": "gzip"}
        if content_type:
            headers["Content-Type"] = content_type
        # The bearer token, refreshed by the kubeconfig's exec plugin or token file when it expires.
        headers.update(self._auth_headers())
        url = self.host + path + (("?" + urlencode(query)) if query else "")
        remaining = self.deadline.remaining()
        if remaining <= 0:
            raise _Fault("timeout", False, timeout=True)
        with self._lock:
            self.requests += 1
        try:
            response = self.pool.request(method, url, body=body, headers=headers, preload_content=False,
                                         retries=False, redirect=False,
                                         timeout=urllib3.Timeout(connect=remaining, read=remaining))
        except u3.NewConnectionError as exc:  # before ConnectTimeoutError: urllib3 2 derives it from that
            text = str(exc)
            if "Connection refused" in text or "Errno 111" in text:
                raise _Fault("connection refused", True) from None
            if "Name or service not known" in text or "Temporary failure in name resolution" in text \
                    or "nodename nor servname" in text:
                raise _Fault("host name not resolved", False) from None
            raise _Fault(f"cannot connect: {_short(text)}", True) from None
        except (u3.ConnectTimeoutError, u3.ReadTimeoutError):
            raise _Fault("timeout", False, timeout=True) from None
        except u3.SSLError as exc:
            raise _Fault(f"TLS failure: {_short(str(exc))}", False) from None
        except u3.ProtocolError as exc:
            raise _classify_protocol(exc) from None
        except u3.HTTPError as exc:
            raise _Fault(_short(str(exc)), True) from None
        complete = False
        try:
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > limits.MAX_RESPONSE_BYTES:
                raise _Fault(f"response of {declared} bytes, over the {limits.MAX_RESPONSE_BYTES}-byte limit",
                             False)
            data = bytearray()
            # A body that drips a byte at a time never lets a socket timeout fire nor a chunk end: at the
            # deadline the watchdog shuts the socket, so the read returns and the request is a timeout.
            watchdog = threading.Timer(max(0.0, self.deadline.remaining()), _shut, (response,))
            watchdog.daemon = True
            watchdog.start()
            try:
                try:
                    for chunk in response.stream(CHUNK, decode_content=True):
                        data += chunk
                        if len(data) > limits.MAX_RESPONSE_BYTES:
                            raise _Fault(f"response over the {limits.MAX_RESPONSE_BYTES}-byte limit "
                                         "(after decompression)", False)
                        if self.deadline.remaining() <= 0:
                            raise _Fault("timeout", False, timeout=True)
                except (u3.ReadTimeoutError, TimeoutError):
                    raise _Fault("timeout", False, timeout=True) from None
                except u3.DecodeError:
                    raise _Fault("malformed response (bad compression)", False) from None
                except u3.ProtocolError as exc:
                    raise _classify_protocol(exc) from None
                except OSError as exc:
                    raise _Fault(_short(str(exc)), True) from None
            except _Fault as fault:
                if not fault.timeout and self.deadline.remaining() <= 0:  # cut off by the watchdog
                    raise _Fault("timeout", False, timeout=True) from None
                raise
            finally:
                watchdog.cancel()
            complete = True
            return response.status, bytes(data)
        finally:
            if complete:
                response.release_conn()  # read to the end: the connection can serve the next request
            else:
                response.close()  # unread bytes stay on it: never hand it back to the pool

    def _request(self, what: str, method: str, path: str, query: list[tuple[str, str]] | None = None,
                 body: bytes | None = None, content_type: str | None = None, *, missing_ok: bool = False,
                 unavailable_ok: bool = False, raw: bool = False, missing: tuple[int, ...] = (404,)) -> Any:
        """The JSON answer (``raw``: the bytes), or None for a ``missing`` status (404) when
        ``missing_ok``, or UNAVAILABLE for a 404/503 when ``unavailable_ok`` (an aggregated API that is
        down); anything else is a worded error."""
        delay = BACKOFF
        for attempt in range(1, RETRIES + 1):
            try:
                status, data = self._once(method, path, list(query or []), body, content_type)
            except _Fault as fault:
                if fault.timeout:
                    raise self._timeout(what) from None
                if fault.retry and attempt < RETRIES:
                    self._sleep(delay, what)
                    delay *= 2
                    continue
                raise self._fail("DIFF-LIVE", f"{what}: {fault.detail} ({self.shown}, {self.where})") from None
            if status in missing and missing_ok:
                return None
            if unavailable_ok and (status == 404 or (status == 503 and attempt == RETRIES)):
                return UNAVAILABLE
            if status in (401, 403):
                hint = ("check the credentials" if status == 401 else
                        "check RBAC (get, list; patch for --server-side)")
                raise self._fail("DIFF-LIVE", f"{what}: {status} {_status_text(status)}{_message(data)} from "
                             f"{self.shown} ({self.where}); {hint}")
            if (status == 429 or status >= 500) and attempt < RETRIES:
                self._sleep(delay, what)
                delay *= 2
                continue
            if not 200 <= status < 300:
                raise self._fail("DIFF-LIVE", f"{what}: {status} {_status_text(status)}{_message(data)} from "
                             f"{self.shown} ({self.where})")
            if raw:
                return data
            try:
                return json.loads(data)
            except (ValueError, RecursionError):
                raise self._fail("DIFF-LIVE", f"{what}: malformed JSON response from {self.shown} ({self.where})") \
                    from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _sleep(self, delay: float, what: str) -> None:
        if self.deadline.remaining() <= delay:
            raise self._timeout(what)
        time.sleep(delay)

    def _timeout(self, what: str) -> RenderError:
        return self._fail("DIFF-TIMEOUT", f"{what}: no answer from {self.shown} ({self.where}) within "
                      f"--timeout {self.deadline.seconds:g}s")

    def _object(self, what: str, body: Any) -> Obj:
        meta = body.get("metadata") if isinstance(body, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"] \
                or not isinstance(meta.get("namespace") or "", str):
            raise self._fail("DIFF-LIVE", f"{what}: malformed response (not a Kubernetes object with a "
                         f"metadata.name) from {self.shown} ({self.where})")
        return body

    # - discovery -

    def _discover(self) -> dict[tuple[str, str], Resource]:
        """Every served kind: ``/api``, ``/apis``, then each group's versions' resource lists (at most
        ``LIST_CONCURRENCY`` at once). A group version whose list fails is remembered: an error if a
        rendered object needs it, a warning for the orphan search."""
        if self._resources is not None:
            return self._resources
        groups = self._request("API discovery", "GET", "/apis")
        core = self._request("API discovery", "GET", "/api")
        if not isinstance(groups, dict) or not isinstance(groups.get("groups"), list) or not isinstance(core, dict):
            raise self._fail("DIFF-LIVE", f"API discovery: malformed discovery response from {self.shown} "
                             f"({self.where})")
        versions = [f"{v}" for v in core.get("versions") or [] if isinstance(v, str)]
        for group in groups["groups"]:
            if not isinstance(group, dict) or not isinstance(group.get("name"), str):
                raise self._fail("DIFF-LIVE", f"API discovery: malformed discovery response from {self.shown} "
                             f"({self.where})")
            preferred = (group.get("preferredVersion") or {}).get("groupVersion")
            for v in group.get("versions") or []:
                gv = v.get("groupVersion") if isinstance(v, dict) else None
                if isinstance(gv, str) and gv.count("/") == 1:
                    versions.append(gv)
            if isinstance(preferred, str):
                self._preferred[group["name"]] = preferred
        resources: dict[tuple[str, str], Resource] = {}

        def one(gv: str) -> list[Resource]:
            what = f"API discovery of {gv}"
            path = f"/api/{gv}" if "/" not in gv else f"/apis/{gv}"
            # Only an unavailable group version (an aggregated API that is down, as kubectl warns) is
            # passed over; a malformed, truncated or forbidden answer is an error.
            body = self._request(what, "GET", path, unavailable_ok=gv != "v1")
            if body is UNAVAILABLE:
                with self._lock:
                    self._failed_groups[gv] = f"{what}: the server is currently unable to handle the request"
                return []
            items = body.get("resources") if isinstance(body, dict) else None
            if not isinstance(items, list):
                raise self._fail("DIFF-LIVE", f"{what}: malformed discovery response from {self.shown} ({self.where})")
            found = []
            for r in items:
                if not isinstance(r, dict) or not all(isinstance(r.get(k), str) for k in ("name", "kind")):
                    raise self._fail("DIFF-LIVE", f"{what}: malformed discovery response from {self.shown} "
                                 f"({self.where})")
                if "/" in r["name"]:
                    continue  # a subresource
                verbs: list[Any] = r["verbs"] if isinstance(r.get("verbs"), list) else []
                found.append(Resource(gv, r["kind"], r["name"], bool(r.get("namespaced")),
                                      frozenset(v for v in verbs if isinstance(v, str))))
            return found

        for found in self._parallel(one, list(dict.fromkeys(versions))):
            for r in found:
                resources.setdefault((r.api_version, r.kind), r)
        self._resources = resources
        return resources

    def _parallel(self, fn: Callable[[Any], T], items: list[Any]) -> list[T]:
        """``fn`` over ``items``, at most LIST_CONCURRENCY at once, results in order; the first error wins."""
        from concurrent.futures import ThreadPoolExecutor

        if len(items) <= 1:
            return [fn(i) for i in items]
        with ThreadPoolExecutor(max_workers=LIST_CONCURRENCY, thread_name_prefix="diff-list") as pool:
            futures = [pool.submit(fn, i) for i in items]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def resource(self, api_version: str, kind: str) -> Resource | None:
        """The discovered resource, or None if the server does not serve that kind."""
        found = self._discover().get((api_version, kind))
        if found is None and api_version in self._failed_groups:
            raise self._fail("DIFF-LIVE", f"discovery of {kind} ({api_version}): {self._failed_groups[api_version]}")
        return found

    # - what diff asks -

    def get(self, obj: Obj) -> Obj | None:
        key = key_of(obj)
        resource = self.resource(str(obj["apiVersion"]), key[1])
        if resource is None:
            return None  # the kind is not served (its CRD is not installed): the object is to create
        namespace = (key[2] or "default") if resource.namespaced else None
        what = ref(key)
        body = self._request(what, "GET", resource.path(namespace, key[3]), missing_ok=True)
        return None if body is None else self._object(what, body)

    def _list(self, resource: Resource, selector: str | None, namespace: str | None = None) -> list[Obj]:
        """Every item of one kind (in ``namespace`` when given), page by page (``limit``/``continue``,
        at most MAX_LIST_PAGES pages; a token seen twice is an endless list), each item validated: a
        name, no duplicates."""
        namespace = namespace if resource.namespaced else None
        what = f"list {resource.kind}" + (f" -n {namespace}" if namespace else "") + \
            (f" -l {selector}" if selector else "")
        items: list[Obj] = []
        seen: set[tuple[str, str]] = set()
        tokens: set[str] = set()
        token = ""
        for _page in range(limits.MAX_LIST_PAGES):
            query = [("limit", str(LIST_PAGE))] + ([("labelSelector", selector)] if selector else []) + \
                ([("continue", token)] if token else [])
            body = self._request(what, "GET", resource.path(namespace), query)
            page = body.get("items") if isinstance(body, dict) else None
            if not isinstance(page, list):
                raise self._fail("DIFF-LIVE", f"{what}: malformed list response (no items) from {self.shown} "
                             f"({self.where})")
            for item in page:
                self._object(what, item)
                meta = item["metadata"]
                identity = (meta.get("namespace") or "", meta["name"])
                if identity in seen:
                    raise self._fail("DIFF-LIVE", f"{what}: malformed list response "
                                     f"({'/'.join(filter(None, identity))} "
                                 f"twice) from {self.shown} ({self.where})")
                seen.add(identity)
                item.setdefault("apiVersion", resource.api_version)  # items of built-in kinds omit them
                item.setdefault("kind", resource.kind)
                items.append(item)
            list_meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
            next_token = list_meta.get("continue")
            if not next_token:
                return items
            if not isinstance(next_token, str) or next_token in tokens:
                raise self._fail("DIFF-LIVE", f"{what}: malformed list response (an endless continue) from "
                                 f"{self.shown} "
                             f"({self.where})")
            tokens.add(next_token)
            token = next_token
        raise self._fail("DIFF-LIVE", f"{what}: more than {limits.MAX_LIST_PAGES} pages of {LIST_PAGE} from "
                         f"{self.shown} "
                     f"({self.where})")

    def packages(self) -> list[Obj]:
        """Every live Package (``--effective``: the platform's own carry no label of ours)."""
        resource = self.resource(PACKAGE_API, "Package")
        return self._list(resource, None) if resource is not None else []

    def dry_run_apply(self, obj: Obj) -> Obj:
        """The object as the API server would store it after a server-side apply under our field
        manager (``dryRun=All``: nothing is written; ``force``: a field a hand edit took from us is a
        difference to show, not a conflict)."""
        key = key_of(obj)
        resource = self.resource(str(obj["apiVersion"]), key[1])
        what = f"server-side dry-run of {ref(key)}"
        if resource is None:
            raise self._fail("DIFF-LIVE", f"{what}: the server does not serve {key[1]} ({obj['apiVersion']}); "
                         "install its CRD first")
        namespace = (key[2] or "default") if resource.namespaced else None
        query = [("fieldManager", self.field_manager), ("dryRun", "All"), ("force", "true")]
        body = self._request(what, "PATCH", resource.path(namespace, key[3]), query,
                             json.dumps(obj).encode(), "application/apply-patch+yaml")
        return self._object(what, body)

    def fetch(self, desired: list[Obj], cluster: str) -> tuple[dict[Key, Obj | None], list[Obj]]:
        """One list per listable kind the server serves (discovery-driven, the rendered kinds at their
        rendered version, every other kind once at its group's preferred version), selecting objects
        that carry the cluster label; then a GET only for rendered objects the lists did not hold.
        Objects labelled for another cluster mean the wrong context: DIFF-CONTEXT."""
        resources = self._discover()
        rendered = dict.fromkeys((str(o["apiVersion"]), str(o["kind"])) for o in desired)
        for api_version, kind in rendered:
            self.resource(api_version, kind)  # a failed discovery of a rendered kind is an error
        chosen: dict[tuple[str, str], Resource] = {}
        for (api_version, kind), r in resources.items():
            group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
            if "list" not in r.verbs:
                continue
            # a rendered kind at its rendered version; any other once, at its group's preferred version
            preferred = not group or self._preferred.get(group) == api_version
            if (api_version, kind) in rendered or ((group, kind) not in chosen and preferred):
                chosen[(group, kind)] = r
        selector = CLUSTER_LABEL
        self.skipped = [f"{gv}: {why}" for gv, why in sorted(self._failed_groups.items())]

        def one(r: Resource) -> list[Obj]:
            try:
                return self._list(r, selector)
            except RenderError as exc:
                code = exc.findings[0].code if exc.findings else ""
                if (r.api_version, r.kind) in rendered or code == "DIFF-TIMEOUT":
                    raise
                with self._lock:  # a kind we do not render: its orphans cannot be searched (a warning)
                    self.skipped.append(exc.findings[0].message)
                return []

        everything = [o for found in self._parallel(one, [chosen[k] for k in sorted(chosen)]) for o in found]
        labelled = [o for o in everything if _labels(o).get(CLUSTER_LABEL) == cluster]
        # Objects a controller made (ownerReferences) may carry copied labels; what we apply does not.
        applied = [o for o in everything if not (o.get("metadata") or {}).get("ownerReferences")]
        others = sorted({str(_labels(o).get(CLUSTER_LABEL)) for o in applied} - {cluster})
        if others:
            example = next(o for o in applied if _labels(o).get(CLUSTER_LABEL) != cluster)
            raise self._fail("DIFF-CONTEXT", f"{cluster}: {self.where} ({self.shown}) holds objects of cluster "
                         f"{', '.join(others)} ({ref(key_of(example))} is labelled "
                         f"{CLUSTER_LABEL}={_labels(example).get(CLUSTER_LABEL)}), not {cluster}: the wrong "
                         "context? Pass --context, or set live.context in the overlay")
        listed = {key_of(o): o for o in labelled}
        live: dict[Key, Obj | None] = {}
        for obj in desired:
            key = key_of(obj)
            found = listed.get(key) or (listed.get((key[0], key[1], "default", key[3])) if not key[2] else None)
            live[key] = found if found is not None else self.get(obj)
        return live, labelled


def _shut(response: Any) -> None:
    """End a response's socket now (the deadline passed mid-body); the reader sees the connection end."""
    import socket

    sock = getattr(getattr(response, "connection", None), "sock", None)
    if sock is not None:
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def shown_url(url: str) -> str:
    """``url`` as messages print it: scheme, host, port and path; never userinfo, a query or a fragment
    (a server URL may carry a password or an ``access_token``)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the kubeconfig's server"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else (host + port + parts.path or url)


def _url_secrets(url: str | None) -> list[str]:
    """The password, user and query values a server URL carries (masked wherever they could appear)."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password or "", unquote(parts.password or "")]
        found += [value for _, value in parse_qsl(parts.query)] + [parts.query]
    except ValueError:
        return []
    return [value for value in found if value]


def _load_failure(exc: BaseException, configuration: Any) -> str:
    """Why the kubeconfig could not be loaded, in the client's words when it gave some (ConfigException),
    else by what failed: never an internal exception's text, which can quote a credential."""
    text = _first_line(exc)
    if type(exc).__name__ == "ConfigException":
        known = (*(getattr(configuration, "api_key", None) or {}).values(), getattr(configuration, "password", None))
        for secret in known:
            if isinstance(secret, str) and len(secret.strip()) >= 4:
                text = text.replace(secret.strip(), "***")
        return text
    return (f"its user's credentials could not be used ({type(exc).__name__}; an auth-provider such as oidc "
            "needs a valid id-token: refresh it with kubectl, or use an exec plugin)")


def _labels(obj: Obj) -> dict[str, Any]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


def _classify_protocol(exc: Exception) -> _Fault:
    text = str(exc)
    if "IncompleteRead" in text or "InvalidChunkLength" in text or "Response ended prematurely" in text:
        return _Fault("truncated response", False)
    if "Connection reset" in text or "ConnectionResetError" in text or "Errno 104" in text:
        return _Fault("connection reset", True)
    if "RemoteDisconnected" in text or "closed connection without response" in text:
        return _Fault("connection closed without a response", True)
    if "Connection refused" in text:
        return _Fault("connection refused", True)
    return _Fault(f"protocol error: {_short(text)}", True)


def _status_text(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "error"


def _message(data: bytes) -> str:
    """A Status body's message, short and on one line (a hostile body is never echoed whole)."""
    try:
        message = json.loads(data[:65536]).get("message", "")
    except (ValueError, AttributeError, TypeError, RecursionError):
        return ""
    if not isinstance(message, str) or not message:
        return ""
    line = " ".join(message.split())
    return f": {line[:200]}{'…' if len(line) > 200 else ''}"


def _short(text: str) -> str:
    # urllib3 errors repeat the pool and the URL; keep the cause (e.g. "Connection refused").
    for marker in ("Connection refused", "Name or service not known", "certificate verify failed",
                   "timed out", "Connection reset"):
        if marker in text:
            return marker.lower() if marker != "Connection refused" else "connection refused"
    cause = text.split("Caused by ", 1)[-1] if "Caused by " in text else text
    return cause.splitlines()[0].rstrip(")")[:200]
