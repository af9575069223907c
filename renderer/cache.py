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
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_Hash = Any  # hashlib._Hash


def _sha256(data: bytes) -> _Hash:
    """SHA-256 from CPython's built-in module when it has one: importing hashlib loads OpenSSL, a few
    milliseconds a cache hit would otherwise spend before replaying."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython's own, not in typeshed
    except ImportError:  # pragma: no cover - other interpreters
        from hashlib import sha256
    return sha256(data)


ENV = "COZY_RENDER_CACHE_DIR"
_FORMAT = "cozy-render-cache-v2"
# Libraries whose code shapes the output bytes (parsing, templating, emitting, validating).
_LIBRARIES = ("ruamel.yaml", "_ruamel_yaml", "jinja2", "fastjsonschema")


def cache_dir() -> Path | None:
    value = os.environ.get(ENV, "")
    return Path(value) if value else None


def _stat_line(path: str) -> str:
    st = os.stat(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def fingerprint() -> str:
    """Identity of the code that renders: every file of the installed package and its libraries."""
    import importlib.util

    package = os.path.dirname(os.path.abspath(__file__))  # all of renderer/
    lines = [_FORMAT, sys.version, sys.platform]
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        lines += [_stat_line(os.path.join(folder, f)) for f in sorted(files) if not f.endswith(".pyc")]
    for name in _LIBRARIES:
        spec = importlib.util.find_spec(name)
        lines.append(_stat_line(spec.origin) if spec and spec.origin else f"{name}:missing")
    return _sha256("\n".join(lines).encode()).hexdigest()


def key(root: Path, target: Path, command: Iterable[str]) -> str:
    """Cache key for rendering ``target`` inside ``root`` from the working directory, with ``command``."""
    cwd = Path.cwd()
    parts = [fingerprint(), _relative(cwd, root), _relative(target.absolute(), root), *command]
    return _sha256("\0".join(parts).encode()).hexdigest()


def _relative(path: Path, root: Path) -> str:
    """Positions in messages are relative to the working directory, so it is part of the key."""
    try:
        return "@root/" + path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path.resolve())


def _digest(path: Path) -> str:
    return _sha256(path.read_bytes()).hexdigest()


def _where(path: Path, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return str(absolute)


def _resolves_to(named: str, root: Path) -> str | None:
    """Where ``named`` (repository-relative or absolute) leads now, as recorded: None when nothing is there."""
    path = root / named
    if not os.path.exists(path):  # missing, a dangling link, or a link loop
        return None
    return _where(Path(os.path.realpath(path)), root)


# The largest entry read back (a render's stdout is bounded by its budgets; a bigger file is not ours).
MAX_ENTRY_BYTES = 64 * 1024 * 1024


def trusted(folder: Path) -> bool:
    """The cache folder is the user's own, a real folder, and not writable by group or others."""
    import stat

    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def usable(folder: Path, create: bool = False) -> Path | None:
    """Where entries live: ``folder`` when trusted; else (a shared or world-writable folder, such as a
    Kubernetes emptyDir, mode 0777) the user's own 0700 ``cozy-render-<uid>`` inside it; None when
    neither can be trusted (someone else owns it), and then the cache is not used at all."""
    if trusted(folder):
        return folder
    own = folder / f"cozy-render-{os.geteuid()}"
    if create:
        with contextlib.suppress(OSError):
            own.mkdir(mode=0o700)
    return own if trusted(own) else None


def _read_entry(path: Path) -> Any:
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0))  # a FIFO opens without blocking, and is refused below
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return json.loads(handle.read(MAX_ENTRY_BYTES + 1).decode("utf-8"))
    finally:
        os.close(fd)


def lookup(folder: Path, entry_key: str, root: Path) -> tuple[str, str] | None:
    """(stdout, stderr) of the stored render when all its inputs are unchanged, else None."""
    found = usable(folder)
    if found is None:
        return None
    try:
        entry = _read_entry(found / f"{entry_key}.json")
        if not isinstance(entry, dict):
            return None
        for named, real in entry["resolved"]:
            if not isinstance(named, str) or _resolves_to(named, root) != real:
                return None
        for rel, digest in entry["inputs"].items():
            path = (root / rel).resolve()
            if root not in path.parents or not path.is_file() or _digest(path) != digest:
                return None
        stdout, stderr = entry["stdout"], entry["stderr"]
        return (stdout, stderr) if isinstance(stdout, str) and isinstance(stderr, str) else None
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None  # missing, unreadable, corrupt or foreign entry: render afresh


def store(folder: Path, entry_key: str, root: Path, inputs: Iterable[Path], stdout: str, stderr: str,
          resolved: Iterable[tuple[Path, Path | None]] | None = None) -> None:
    """Record a successful render; a failure to write only costs the next render its shortcut.

    ``resolved`` is every path the render resolved, as named and what it led to (None: not found);
    by default the record the loader kept for the render that just ran (``overlay.resolutions``).
    """
    import tempfile

    if resolved is None:
        from renderer.load.overlay import resolutions

        resolved = resolutions()
    try:
        recorded = {p.resolve().relative_to(root).as_posix(): _digest(p) for p in inputs}
        paths = [[_where(named, root), None if real is None else _where(real, root)] for named, real in resolved]
        for rel in recorded:  # every file read is also a path resolved (it may be reached through a link)
            paths.append([rel, rel])
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        own = usable(folder, create=True)
        if own is None:
            return  # another user's folder: never feed it
        folder = own
        fd, tmp = tempfile.mkstemp(prefix=".entry-", dir=folder)
    except (OSError, ValueError, RecursionError):
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"inputs": recorded, "resolved": paths, "stdout": stdout, "stderr": stderr}, handle)
        os.replace(tmp, folder / f"{entry_key}.json")
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # a full disk must not leave .entry-* files behind
