"""A content-addressed render cache for the two commands run on every refresh.

Argo CD caches manifests per commit, so every commit to a fleet repository makes every
Application regenerate, although most clusters' inputs did not change. With
``COZY_RENDER_CACHE_DIR`` set (the sidecar points it at an emptyDir), ``cmp generate`` and
``render PATH`` look up the previous result for the same cluster, arguments and parameters, and
replay it when every file the render read still has the same content, every path it resolved
still resolves to the same place (a symlinked layer is recorded as the link and its target, and a
path it looked for and did not find must still be absent), and cozy-render and its libraries are
the same files. A hit costs hashing a few files and imports none of the YAML,
template or schema libraries. Output is byte-identical to a fresh render: the cache only skips
work. Only successful renders are stored; errors are always recomputed.

Entries are JSON files named by the key; writes are atomic (rename), so concurrent renders are
safe, and a failed write (a full disk) removes its temporary file. Anyone who can write the cache
folder can change what is served, so the cache is used only when the folder is the user's own and
no one else may write it (it is created 0700); otherwise every render is a miss and nothing is
stored. An entry is read only when it is a regular file of the user's, at most MAX_ENTRY_BYTES, of
the expected shape: a FIFO, a link, a huge or corrupt entry is a miss (issue 25 item 11).

A hit is the start-up cost Argo CD pays most (issue 24), so this module works on strings with
``os`` alone: no ``pathlib``, ``json``, ``re`` or ``typing`` (each pulls in more of the standard
library than the whole replay needs). ``replay`` is the hit of the two start-up fast paths
(``renderer.entry``), before any request object exists; entries are JSON read by CPython's own C
scanner (``_json``, what ``json.loads`` runs) without importing the ``json`` package.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    StrPath = str | os.PathLike[str]


def _sha256(data: bytes) -> Any:
    """SHA-256 from CPython's built-in module when it has one: importing hashlib loads OpenSSL, a few
    milliseconds a cache hit would otherwise spend before replaying."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython's own, not in typeshed
    except ImportError:  # pragma: no cover - other interpreters
        from hashlib import sha256
    return sha256(data)


ENV = "COZY_RENDER_CACHE_DIR"
_FORMAT = "cozy-render-cache-v3"
# Libraries whose code shapes the output bytes (parsing, templating, emitting, validating).
_LIBRARIES = ("ruamel.yaml", "_ruamel_yaml", "jinja2", "fastjsonschema")


def _stat_line(path: str) -> str:
    st = os.stat(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def _library_origin(name: str) -> str | None:
    """Where library ``name`` would be imported from, found the way ``import`` finds it (``sys.meta_path``)
    without importing ``importlib.util``; a dotted name's parent package is imported (``ruamel``, a
    namespace package, costs nothing)."""
    parent, _, _ = name.rpartition(".")
    search = None
    if parent:
        __import__(parent)
        search = sys.modules[parent].__path__
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, search) if find else None
        if spec is not None:
            return spec.origin
    return None


class _Listing:
    """Which files make up the code: every file of the package, each library's entry file, and the
    folders whose modification time changes whenever a file is added to or removed from that set."""

    def __init__(self, files: list[str], libraries: list[tuple[str, str]], folders: list[str]) -> None:
        self.files = files
        self.libraries = libraries  # (name, origin); "" when the library is missing
        self.folders = folders

    @classmethod
    def walk(cls) -> _Listing:
        package = os.path.dirname(os.path.abspath(__file__))  # all of renderer/
        files: list[str] = []
        folders: list[str] = []
        for folder, dirs, names in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            folders.append(folder)
            files += [os.path.join(folder, f) for f in sorted(names) if not f.endswith(".pyc")]
        libraries = [(name, _library_origin(name) or "") for name in _LIBRARIES]
        for _, origin in libraries:  # a library's own folder and the one it was found in
            if origin:
                folders += [os.path.dirname(origin), os.path.dirname(os.path.dirname(origin))]
        folders += [p for p in sys.path if p and os.path.isdir(p)]  # a library installed in front of them
        return cls(files, libraries, folders)

    def dump(self) -> str:
        """One record per NUL (no path holds one): ``D<mtime_ns>:<folder>``, ``F<file>``, ``L<name>:<origin>``,
        then ``E<count of records before it>``."""
        records = [_MEMO_FORMAT]
        records += [f"D{os.stat(folder).st_mtime_ns}:{folder}" for folder in self.folders]
        records += [f"F{path}" for path in self.files]
        records += [f"L{name}:{origin}" for name, origin in self.libraries]
        records.append(f"E{len(records)}")  # a listing cut short is not a listing
        return "\0".join(records)

    @classmethod
    def load(cls, text: str) -> _Listing | None:
        """The listing ``dump`` wrote, while every folder it names has the modification time recorded."""
        records = text.split("\0")
        if records[0] != _MEMO_FORMAT or records[-1] != f"E{len(records) - 1}":
            return None
        listing = cls([], [], [])
        for record in records[1:-1]:
            kind, value = record[:1], record[1:]
            if kind == "F":
                listing.files.append(value)
            elif kind == "D":
                mtime, _, folder = value.partition(":")
                if str(os.stat(folder).st_mtime_ns) != mtime:
                    return None
                listing.folders.append(folder)
            elif kind == "L":
                name, _, origin = value.partition(":")
                listing.libraries.append((name, origin))
            else:
                return None
        return listing


_MEMO_FORMAT = "cozy-render-code-listing-v2"
# A folder changed this recently may change again within its file system's timestamp granularity
# without its mtime moving, so a listing taken then is used but not remembered ("racy git").
_SETTLED_NS = 2_000_000_000


def _memo_name() -> str:
    """One remembered listing per installed package, interpreter and import path."""
    identity = "\0".join([_MEMO_FORMAT, os.path.abspath(__file__), sys.executable, sys.version, *sys.path])
    return f"code-{_sha256(identity.encode()).hexdigest()[:32]}.listing"


def _listing(folder: StrPath | None) -> _Listing:
    """The code's listing: remembered in the cache folder while its folders are unchanged, else walked
    (about 40 ``stat`` calls instead of a walk of the package and a search for each library)."""
    own = usable(folder) if folder else None
    if own is None:
        return _Listing.walk()
    memo = os.path.join(own, _memo_name())
    try:
        data = _read_private(memo)
        found = _Listing.load(data.decode("utf-8")) if data is not None else None
    except (OSError, ValueError):
        found = None
    if found is not None:
        return found
    listing = _Listing.walk()
    try:
        text = listing.dump()
        import time

        if all(os.stat(f).st_mtime_ns < time.time_ns() - _SETTLED_NS for f in listing.folders):
            tmp = f"{memo}.{os.getpid()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(tmp, memo)
            except OSError:
                os.unlink(tmp)
                raise
    except (OSError, ValueError):
        pass  # not remembered: the next hit walks again
    return listing


def _stat_lines(paths: list[str]) -> list[str]:
    """``_stat_line`` of each path; a folder's files are stat-ed relative to it (``dir_fd``), which spares
    the kernel walking the whole path ~400 times (about 40 % of a hit's own time)."""
    if os.stat not in os.supports_dir_fd:  # pragma: no cover - not on Linux or macOS
        return [_stat_line(path) for path in paths]
    lines: list[str] = []
    current, fd = None, -1
    try:
        for path in paths:
            where, _, name = path.rpartition(os.sep)  # os.path.split's work for a normalised path
            where = where or os.sep
            if where != current:
                if fd >= 0:
                    os.close(fd)
                    fd = -1
                fd = os.open(where, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
                current = where
            st = os.stat(name, dir_fd=fd)
            lines.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    finally:
        if fd >= 0:
            os.close(fd)
    return lines


def fingerprint(folder: StrPath | None = None) -> str:
    """Identity of the code that renders: every file of the installed package (its size and mtime) and
    each library's entry file; ``folder`` (the cache folder) remembers which files those are."""
    listing = _listing(folder)
    lines = [_FORMAT, sys.version, sys.platform]
    lines += _stat_lines(listing.files)
    lines += [_stat_line(origin) if origin else f"{name}:missing" for name, origin in listing.libraries]
    return _sha256("\n".join(lines).encode()).hexdigest()


def key(root: StrPath, target: StrPath, command: Iterable[str], folder: StrPath | None = None) -> str:
    """Cache key for rendering ``target`` inside ``root`` from the working directory, with ``command``
    (``folder``: the cache folder, where ``fingerprint`` remembers its listing)."""
    root = os.fspath(root)
    parts = [fingerprint(folder), _relative(os.getcwd(), root), _relative(os.fspath(target), root), *command]
    return _sha256("\0".join(parts).encode()).hexdigest()


def _relative_to(path: str, root: str) -> str | None:
    """``PurePath(path).relative_to(root).as_posix()`` of two normalised absolute paths; None when ``path``
    is not inside ``root``."""
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def _relative(path: str, root: str) -> str:
    """Positions in messages are relative to the working directory, so it is part of the key."""
    real = os.path.realpath(path)
    inside = _relative_to(real, root)
    return real if inside is None else "@root/" + inside


def _inside(path: str, root: str) -> bool:
    """``root`` is one of ``path``'s parents (``path`` is below it, not ``root`` itself)."""
    return path != root and _relative_to(path, root) is not None


def _digest(path: str) -> str:
    with open(path, "rb") as handle:
        return _sha256(handle.read()).hexdigest()


def _where(path: StrPath, root: str) -> str:
    absolute = os.path.abspath(path)
    inside = _relative_to(absolute, root)
    return absolute if inside is None else inside


def _resolves_to(named: str, root: str) -> str | None:
    """Where ``named`` (repository-relative or absolute) leads now, as recorded: None when nothing is there."""
    path = os.path.join(root, named)
    if not os.path.exists(path):  # missing, a dangling link, or a link loop
        return None
    return _where(os.path.realpath(path), root)


# The largest entry read back (a render's stdout is bounded by its budgets; a bigger file is not ours).
MAX_ENTRY_BYTES = 64 * 1024 * 1024


def trusted(folder: StrPath) -> bool:
    """The cache folder is the user's own, a real folder, and not writable by group or others."""
    import stat

    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def usable(folder: StrPath, create: bool = False) -> str | None:
    """Where entries live: ``folder`` when trusted; else (a shared or world-writable folder, such as a
    Kubernetes emptyDir, mode 0777) the user's own 0700 ``cozy-render-<uid>`` inside it; None when
    neither can be trusted (someone else owns it), and then the cache is not used at all."""
    folder = os.fspath(folder)
    if trusted(folder):
        return folder
    own = os.path.join(folder, f"cozy-render-{os.geteuid()}")
    if create:  # only when storing, after a render: contextlib costs nothing more then
        import contextlib

        with contextlib.suppress(OSError):
            os.mkdir(own, 0o700)
    return own if trusted(own) else None


class _JsonContext:
    """What ``_json.make_scanner`` reads from a ``json.JSONDecoder``: strict JSON, plain dicts and lists;
    NaN and Infinity refused (no entry holds them)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> Any:
        raise ValueError(f"{name} in a cache entry")


_JSON_SPACE = " \t\n\r"


def _parse_json(text: str) -> Any:
    """``json.loads(text)`` by the C scanner ``json.loads`` itself runs, without importing ``json`` (and
    ``re``, which it imports); errors are ``ValueError`` (``json.JSONDecodeError``) or ``RecursionError``."""
    try:
        from _json import make_scanner  # CPython's own: what json.decoder.JSONDecoder scans with
    except ImportError:  # pragma: no cover - other interpreters
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        value, end = make_scanner(_JsonContext)(text, start)  # type: ignore[arg-type]  # reads these attributes
    except Exception:  # noqa: BLE001 - see below
        # The scanner raises json.decoder.JSONDecodeError only once json.decoder is imported (it looks
        # the class up in sys.modules); a corrupt entry is rare, so the json package says what is wrong.
        import json

        return json.loads(text)
    if text[end:].strip(_JSON_SPACE):
        raise ValueError("extra data after the JSON value")
    return value


def _read_private(path: str) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of the user's of at most MAX_ENTRY_BYTES, else None;
    a link is refused, and a FIFO opens without blocking and is refused."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(MAX_ENTRY_BYTES + 1)
    finally:
        os.close(fd)


def _read_entry(path: str) -> Any:
    data = _read_private(path)
    return None if data is None else _parse_json(data.decode("utf-8"))


def lookup(folder: StrPath, entry_key: str, root: StrPath) -> tuple[str, str] | None:
    """(stdout, stderr) of the stored render when all its inputs are unchanged, else None."""
    root = os.fspath(root)
    found = usable(folder)
    if found is None:
        return None
    try:
        entry = _read_entry(os.path.join(found, f"{entry_key}.json"))
        if not isinstance(entry, dict):
            return None
        for named, real in entry["resolved"]:
            if not isinstance(named, str) or _resolves_to(named, root) != real:
                return None
        for rel, digest in entry["inputs"].items():
            path = os.path.realpath(os.path.join(root, rel))
            if not _inside(path, root) or not os.path.isfile(path) or _digest(path) != digest:
                return None
        stdout, stderr = entry["stdout"], entry["stderr"]
        return (stdout, stderr) if isinstance(stdout, str) and isinstance(stderr, str) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # missing, unreadable, corrupt or foreign entry: render afresh


def store(folder: StrPath, entry_key: str, root: StrPath, inputs: Iterable[StrPath], stdout: str, stderr: str,
          resolved: Iterable[tuple[StrPath, StrPath | None]]) -> None:
    """Record a successful render; a failure to write only costs the next render its shortcut.

    ``resolved`` is every path the render resolved, as named and what it led to (None: not found):
    the record ``renderer.load.overlay.recording`` kept around the render.
    """
    import json
    import tempfile

    root = os.fspath(root)
    try:
        recorded = {}
        for path in inputs:
            rel = _relative_to(os.path.realpath(path), root)
            if rel is None:
                return  # a file read from outside the repository: never replayed
            recorded[rel] = _digest(os.fspath(path))
        paths = [[_where(named, root), None if real is None else _where(real, root)] for named, real in resolved]
        for rel in recorded:  # every file read is also a path resolved (it may be reached through a link)
            paths.append([rel, rel])
        os.makedirs(folder, 0o700, exist_ok=True)
        own = usable(folder, create=True)
        if own is None:
            return  # another user's folder: never feed it
        fd, tmp = tempfile.mkstemp(prefix=".entry-", dir=own)
    except (OSError, ValueError, RecursionError):
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"inputs": recorded, "resolved": paths, "stdout": stdout, "stderr": stderr}, handle)
        os.replace(tmp, os.path.join(own, f"{entry_key}.json"))
    except (OSError, ValueError):
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(tmp)  # a full disk must not leave .entry-* files behind


# What a start-up render reads from the environment (renderer.requests.CmpGenerateRequest.from_environment;
# `render PATH` reads none): their values join the raw arguments in the key. tests/test_cache_fast.py
# checks that a request built from these alone is the request built from the whole environment.
READ_ENV = ("ARGOCD_APP_PARAMETERS", "ARGOCD_APP_SOURCE_PATH", "KUBE_VERSION")
READ_ENV_PREFIX = "ARGOCD_ENV_"


def argv_fields(argv: list[str], environ: Mapping[str, str]) -> list[str]:
    """The key fields of a start-up fast-path command (``renderer.entry.fast_path``): the raw arguments and
    the values of the environment names it reads. The request those build is a function of exactly
    these (its defaults are code, which ``fingerprint`` covers), so a changed argument or value is a
    changed key, without parsing the arguments a third time. The Click path keys on the request it
    parsed (``renderer.requests.cache_fields``) instead; the two never share an entry (the first field)."""
    read = sorted((k, v) for k, v in environ.items() if k in READ_ENV or k.startswith(READ_ENV_PREFIX))
    return ["argv", str(len(argv)), *argv, *(f"{k}={v}" for k, v in read)]  # no name holds "="


def replay(argv: list[str], environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(stdout, stderr) stored for the fast-path command ``argv`` (``renderer.entry.fast_path`` accepts it),
    exactly what ``write_cached`` would replay for it; None when there is nothing to replay (no cache
    folder, a miss, or anything unusual, which the full path then reports)."""
    folder = environ.get(ENV, "")
    if not folder or len(argv) != 2:
        return None
    from renderer.load.roots import checkout_parts, cluster_file_path, root_path

    try:
        if argv[0] == "cmp":
            target = "."
            cwd = os.getcwd()
            found = checkout_parts(("/", *(p for p in cwd.split("/") if p)), environ.get("ARGOCD_APP_SOURCE_PATH", ""))
            root = os.path.join(*found[0]) if found else None
        else:
            target, root = argv[1], None
        cluster_file = cluster_file_path(target)
        repo_root = os.path.realpath(root or root_path(cluster_file))
        return lookup(folder, key(repo_root, cluster_file, argv_fields(argv, environ), folder), repo_root)
    except (OSError, ValueError):
        return None  # a deleted working directory, an odd path: the full path says what is wrong
