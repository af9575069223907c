"""The two sides of a review as folders: a revision's tree written out of Git's object store, or the
working tree as it is.

Git is data here, never code (SECURITY.md "The pull-request preview"):

- The repository is the checkout's own ``.git``, found by walking up from the path for a ``.git``
  entry, and named explicitly on every call (``--git-dir``/``--work-tree``): a committed folder shaped
  like a Git directory (``HEAD``, ``objects/``, ``refs/``, a ``config`` with ``core.fsmonitor``) is
  never taken for the repository, as Git's own discovery would take it.
- Every call turns off what could run a command or a hook (``core.fsmonitor``, ``core.hooksPath``,
  external diff, replace objects), runs only read-only plumbing (``rev-parse``, ``ls-tree``,
  ``cat-file``, ``ls-files``) with ``GIT_OPTIONAL_LOCKS=0`` (no index refresh is written), and runs in
  its own process group under one deadline with bounded output (``renderer.childproc``).
- A revision's files are streamed from ``cat-file --batch`` into a private scratch folder through
  directory descriptors, never following a link (``O_NOFOLLOW``, ``O_EXCL``): a tree that holds one
  name as a link and a folder cannot make the writer follow the link it just wrote. Entries the file
  system cannot hold (one name as a file and a folder, over-long names or link targets, ``.git``) are
  one DIFF-GIT refusal (exit 3). A blob larger than any render reads (``limits.MAX_FILE_BYTES``) is
  written as a sparse file of its size, so the render refuses it as it would in a checkout, and the
  preview never holds it in memory.

``git worktree add`` would register a worktree in ``.git/worktrees`` and ``git archive`` would apply
``export-ignore``/``export-subst`` attributes, so neither is used; submodules are left out.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import subprocess
import threading
from contextlib import suppress
from pathlib import Path
from typing import IO, NamedTuple

from renderer import childproc
from renderer.errors import EXIT_INPUT, Finding, RenderError
from renderer.escape import quote
from renderer.load import limits

GIT_CODE = "DIFF-GIT"

# Budgets of one preview's Git reads (SECURITY.md "Budgets and limits").
GIT_TIMEOUT_SECONDS = 120  # one git process, wall clock; then its process group is killed
GIT_OUTPUT_BYTES = 64 * 2**20  # what one listing (ls-tree, ls-files, rev-parse) may print
MAX_TREE_ENTRIES = 100_000  # files in one revision's tree
MAX_TREE_BYTES = 512 * 2**20  # bytes written for one revision (blobs over MAX_FILE_BYTES are sparse)
NAME_MAX = 255  # bytes in one path component (Linux)
PATH_MAX = 4095  # bytes in a path or a link target
# Options on every git call: nothing from any config runs a command, and no object is replaced.
_SAFE_OPTIONS = ("--no-replace-objects", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
                 "-c", "core.untrackedCache=false", "-c", "diff.external=", "-c", "core.alternateRefsCommand=",
                 "-c", "protocol.allow=never", "-c", "safe.bareRepository=explicit")


class Repository(NamedTuple):
    """A working tree and the Git directory that is its own (``.git`` beside it, or where ``.git`` points)."""

    top: Path
    git_dir: Path


class Side(NamedTuple):
    """One side of the review: where its files are and what it is."""

    label: str  # what the user asked for: the revision as written, or "working tree"
    commit: str | None  # the resolved commit, None for the working tree
    root: Path  # the repository's top folder on this side
    blobs: dict[str, str] | None  # repository path -> blob id (None: the working tree, read from disk)


def _error(message: str) -> RenderError:
    return RenderError([Finding(GIT_CODE, message)], EXIT_INPUT)


def _env() -> dict[str, str]:
    """git's environment: none of the caller's GIT_* settings (GIT_DIR, GIT_CONFIG_* ...), no prompt."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME")}
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_NO_REPLACE_OBJECTS="1")
    return env


def _argv(repo: Repository, args: tuple[str, ...]) -> list[str]:
    return ["git", f"--git-dir={repo.git_dir}", f"--work-tree={repo.top}", *_SAFE_OPTIONS, *args]


def git(repo: Repository, *args: str, data: bytes | None = None) -> bytes:
    """Run one read-only git command; a failure or a limit is one DIFF-GIT line (exit 3)."""
    try:
        done = childproc.run(_argv(repo, args), _env(), timeout=GIT_TIMEOUT_SECONDS, stdout_bytes=GIT_OUTPUT_BYTES,
                             stderr_bytes=2**20, data=data, cwd=str(repo.top), name="git")
    except OSError as exc:
        raise _error(f"cannot run git: {exc.strerror or exc}") from None
    except childproc.ChildLimit as exc:
        raise _error(f"git {args[0]}: {exc.message}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _error(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return done.stdout


def find_repository(path: Path) -> Repository:
    """The checkout holding ``path``: the nearest folder at or above it with a ``.git`` entry.

    Only a ``.git`` folder (with a ``HEAD``) or a ``.git`` file (``gitdir: ...``, a linked worktree or a
    submodule) counts; Git's own discovery would also take a folder holding ``HEAD``, ``objects/`` and
    ``refs/`` for a bare repository, and that is what a pull request can commit."""
    start = Path(os.path.abspath(path))
    while not start.is_dir() and start != start.parent:
        start = start.parent
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        try:
            mode = os.lstat(dot_git).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) and (dot_git / "HEAD").is_file():
            return Repository(folder.resolve(), dot_git.resolve())
        if stat.S_ISREG(mode):
            pointed = _gitdir_file(dot_git)
            if pointed is not None:
                return Repository(folder.resolve(), pointed)
    raise _error(f"{quote(str(path))} is not inside a Git working tree: --base/--head compare two revisions "
                 "of a repository")


def _gitdir_file(dot_git: Path) -> Path | None:
    try:
        text = dot_git.read_bytes()[:PATH_MAX + 16].decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir: "):
        return None
    pointed = Path(text[len("gitdir: "):])
    pointed = (dot_git.parent / pointed) if not pointed.is_absolute() else pointed
    return pointed.resolve() if (pointed / "HEAD").is_file() else None


def toplevel(path: Path) -> Path:
    """The top folder of the working tree holding ``path``."""
    return find_repository(path).top


def resolve(repo: Repository, revision: str) -> str:
    """The commit ``revision`` names: anything ``git rev-parse`` takes (a branch, tag, ``HEAD~1``, a SHA,
    ``origin/main``, ``:/message text``, ``main@{1}``...)."""
    if revision.startswith("-") or "\0" in revision or not revision:
        raise _error(f"{revision!r} is not a revision")
    try:
        named = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", revision).decode().strip()
        return git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{named}^{{commit}}") \
            .decode().strip()
    except RenderError:
        raise _error(f"{revision!r} names no commit in {quote(str(repo.top))} (fetch it first: a shallow CI "
                     "clone may lack the base; use fetch-depth: 0)") from None


class _Entry(NamedTuple):
    mode: str
    oid: str
    size: int


def tree_entries(repo: Repository, commit: str) -> dict[str, _Entry]:
    """repository path -> entry of every file and link of ``commit`` (submodules left out), refused
    whole when the file system could not hold it."""
    out: dict[str, _Entry] = {}
    listing = git(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit)
    for raw in listing.split(b"\0"):
        if not raw:
            continue
        meta, _, name = raw.partition(b"\t")
        fields = meta.decode("ascii", "replace").split()
        if len(fields) != 4 or fields[1] != "blob":
            continue  # a submodule ("commit"): never read
        mode, _, oid, size = fields
        if mode == "120000" and (not size.isdigit() or int(size) > PATH_MAX):
            raise _error(f"{commit[:12]} holds a link whose target is over {PATH_MAX} bytes: "
                         f"{quote(os.fsdecode(name))}; a tree no checkout can hold is refused")
        if len(out) >= MAX_TREE_ENTRIES:
            raise _error(f"{commit[:12]} holds more than {MAX_TREE_ENTRIES} files; the preview's limit")
        out[_checked_name(name, commit)] = _Entry(mode, oid, int(size) if size.isdigit() else 0)
    _refuse_prefix_clashes(out, commit)
    return out


def _checked_name(name: bytes, commit: str) -> str:
    text = os.fsdecode(name)
    parts = name.split(b"/")
    problem = None
    if len(name) > PATH_MAX:
        problem = f"a path of {len(name)} bytes (the limit is {PATH_MAX})"
    elif any(len(part) > NAME_MAX for part in parts):
        problem = f"a name of more than {NAME_MAX} bytes"
    elif any(part in (b"", b".", b"..") for part in parts) or name.startswith(b"/"):
        problem = "a path with an empty, '.' or '..' part"
    elif any(part.lower() == b".git" for part in parts):
        problem = "a '.git' entry"
    if problem is not None:
        raise _error(f"{commit[:12]} holds {problem}: {quote(text)}; a tree no checkout can hold is refused")
    return text


def _refuse_prefix_clashes(entries: dict[str, _Entry], commit: str) -> None:
    """One name as a file (or link) and as a folder: ``git checkout`` never writes such a tree."""
    for name in entries:
        at = name.find("/")
        while at != -1:
            if name[:at] in entries:
                raise _error(f"{commit[:12]} holds {quote(name[:at])} both as a file and as a folder (of "
                             f"{quote(name)}); a tree no checkout can hold is refused")
            at = name.find("/", at + 1)


def write_tree(repo: Repository, commit: str, label: str, into: Path) -> Side:
    """Write every file of ``commit`` under ``into`` (an empty folder) from Git's object store."""
    entries = tree_entries(repo, commit)
    names = sorted(entries)
    total = sum(entries[n].size for n in names if entries[n].size <= _read_limit())
    if total > MAX_TREE_BYTES:
        raise _error(f"{commit[:12]} holds {total} bytes of files; the preview's limit is {MAX_TREE_BYTES}")
    writer = _TreeWriter(into)
    try:
        streamed = [n for n in names if entries[n].size <= _read_limit() or entries[n].mode == "120000"]
        for name in names:
            if entries[name].size > _read_limit() and entries[name].mode != "120000":
                writer.sparse(name, entries[name].size)
        _stream_blobs(repo, streamed, entries, writer, commit)
    finally:
        writer.close()
    return Side(label, commit, into, {n: _blob_key(entries[n].mode, entries[n].oid) for n in names})


def _blob_key(mode: str, oid: str) -> str:
    """What a side's file is for comparison: its blob id, marked when the blob is a link's target."""
    return f"link:{oid}" if mode == "120000" else oid


def _read_limit() -> int:
    return limits.MAX_FILE_BYTES


def _stream_blobs(repo: Repository, names: list[str], entries: dict[str, _Entry], writer: _TreeWriter,
                  commit: str) -> None:
    """``cat-file --batch`` of ``names``' blobs, each written as it arrives (never the whole tree in memory)."""
    if not names:
        return

    request = b"".join(entries[n].oid.encode() + b"\n" for n in names)
    try:
        with childproc.started(_argv(repo, ("cat-file", "--batch")), _env(), stdin=subprocess.PIPE,
                               cwd=str(repo.top)) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            watchdog = threading.Timer(GIT_TIMEOUT_SECONDS, childproc.kill_group, (proc.pid,))
            feeder = threading.Thread(target=_feed, args=(proc.stdin, request), daemon=True)
            watchdog.start()
            feeder.start()
            try:
                for name in names:
                    entry = entries[name]
                    header = proc.stdout.readline(256).split()
                    if len(header) != 3 or header[1] != b"blob" or int(header[2]) != entry.size:
                        raise _error(f"git cat-file: {commit[:12]}: blob of {quote(name)} could not be read"
                                     + (f" within {GIT_TIMEOUT_SECONDS} s" if not watchdog.is_alive() else ""))
                    writer.write(name, entry.mode, _blob_chunks(proc.stdout, entry.size, name, commit))
                    proc.stdout.read(1)  # the newline after each blob
            finally:
                watchdog.cancel()
    except OSError as exc:
        raise _error(f"cannot run git: {exc.strerror or exc}") from None


def _feed(stdin: IO[bytes], request: bytes) -> None:
    try:
        stdin.write(request)
        stdin.close()
    except (OSError, ValueError):
        pass  # git stopped reading (killed at its deadline): the reader reports it


def _blob_chunks(stream: IO[bytes], size: int, name: str, commit: str) -> list[bytes]:
    chunks, left = [], size
    while left:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            raise _error(f"git cat-file: {commit[:12]}: blob of {quote(name)} ended early")
        chunks.append(chunk)
        left -= len(chunk)
    return chunks


class _TreeWriter:
    """Writes files under one root through directory descriptors, never following a link and never
    writing over anything (every folder opened ``O_NOFOLLOW``, every file created ``O_EXCL``)."""

    _DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    _FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: dict[str, int] = {"": os.open(root, self._DIR_FLAGS)}

    def _folder(self, rel: str) -> int:
        if rel in self.folders:
            return self.folders[rel]
        parent, _, leaf = rel.rpartition("/")
        parent_fd = self._folder(parent)
        with suppress(FileExistsError):  # a folder made for an earlier file; opened below, following nothing
            os.mkdir(leaf, 0o755, dir_fd=parent_fd)
        try:
            fd = os.open(leaf, self._DIR_FLAGS, dir_fd=parent_fd)
        except OSError as exc:
            raise self._refused(rel, exc) from None
        self.folders[rel] = fd
        return fd

    def _refused(self, rel: str, exc: OSError) -> RenderError:
        why = "is a link or a file" if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EEXIST) else \
            (exc.strerror or str(exc))
        return _error(f"cannot write {quote(rel)} of the revision: it {why} in the revision's own tree; refused")

    def write(self, name: str, mode: str, chunks: list[bytes]) -> None:
        folder, _, leaf = name.rpartition("/")
        parent_fd = self._folder(folder)
        try:
            if mode == "120000":
                target = b"".join(chunks)
                if b"\0" in target or len(target) > PATH_MAX or not target:
                    raise _error(f"{quote(name)} is a link whose target no file system can hold; refused")
                os.symlink(target, leaf.encode("utf-8", "surrogateescape"), dir_fd=parent_fd)
                return
            fd = os.open(leaf, self._FILE_FLAGS, 0o755 if mode == "100755" else 0o644, dir_fd=parent_fd)
        except OSError as exc:
            raise self._refused(name, exc) from None
        try:
            for chunk in chunks:
                os.write(fd, chunk)
        finally:
            os.close(fd)

    def sparse(self, name: str, size: int) -> None:
        """A file of ``size`` bytes holding nothing: larger than a render reads, so its bytes never matter."""
        folder, _, leaf = name.rpartition("/")
        parent_fd = self._folder(folder)
        try:
            fd = os.open(leaf, self._FILE_FLAGS, 0o644, dir_fd=parent_fd)
        except OSError as exc:
            raise self._refused(name, exc) from None
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)

    def close(self) -> None:
        for fd in self.folders.values():
            os.close(fd)
        self.folders.clear()


def working_tree(repo: Repository) -> Side:
    return Side("working tree", None, repo.top, None)


def _object_format(repo: Repository) -> str:
    try:
        name = git(repo, "rev-parse", "--show-object-format").decode().strip()
    except RenderError:
        return "sha1"
    return name if name in ("sha1", "sha256") else "sha1"


def working_blob_id(root: Path, rel: str, object_format: str = "sha1") -> str | None:
    """The blob id Git would give working-tree file ``rel`` (a link: its target), read in chunks and never
    through a link or a FIFO; None when it is absent or not a file. No clean filter runs (Git's own
    ``hash-object`` would run one)."""
    path = root / rel
    try:
        st = os.lstat(path)
    except OSError:
        return None
    digest = hashlib.new(object_format)
    if stat.S_ISLNK(st.st_mode):
        target = os.fsencode(os.readlink(path))
        digest.update(b"blob %d\0" % len(target) + target)
        return "link:" + digest.hexdigest()
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        digest.update(b"blob %d\0" % size)
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def changed_paths(base: Side, head: Side, repo: Repository | None = None) -> set[str]:
    """Every repository file whose bytes differ between the sides, that either side has.

    Between two commits: from the blob ids. Against the working tree: each base file's blob id against
    the working file's (hashed as Git would), plus the files Git does not track there that it does not
    ignore either (a new cluster not yet added)."""
    assert base.blobs is not None
    if head.blobs is not None:
        return {p for p in set(base.blobs) | set(head.blobs) if base.blobs.get(p) != head.blobs.get(p)}
    repo = repo or find_repository(head.root)
    fmt = _object_format(repo)
    changed = {rel for rel, key in base.blobs.items() if working_blob_id(head.root, rel, fmt) != key}
    untracked = git(repo, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", ":/")
    changed.update(os.fsdecode(p) for p in untracked.split(b"\0") if p and os.fsdecode(p) not in base.blobs)
    return changed


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def path_changes(base: Side, head: Side, changed: set[str],
                 repo: Repository | None = None) -> dict[str, tuple[str, str | None]]:
    """How each changed path changed: ``(added | modified | deleted | renamed, renamed from)``, from the two
    sides' blob maps (the working tree's files hashed as Git would). A deleted path whose exact blob the
    head adds under another name is that name's ``renamed`` source, and is not listed itself."""
    assert base.blobs is not None
    if head.blobs is None:
        fmt = _object_format(repo or find_repository(head.root))
        head_blobs = {p: working_blob_id(head.root, p, fmt) for p in changed}
    else:
        head_blobs = {p: head.blobs.get(p) for p in changed}
    deleted = {p: base.blobs[p] for p in sorted(changed) if p in base.blobs and head_blobs.get(p) is None}
    sources: dict[str, list[str]] = {}
    for path, old in deleted.items():
        sources.setdefault(old, []).append(path)
    out: dict[str, tuple[str, str | None]] = {}
    for path in sorted(changed):
        blob = head_blobs.get(path)
        if path in deleted:
            continue
        if path in base.blobs:
            out[path] = ("modified", None)
        elif blob is not None and sources.get(blob):
            out[path] = ("renamed", sources[blob].pop(0))
        else:
            out[path] = ("added", None)
    renamed = {source for change, source in out.values() if source is not None}
    out.update({p: ("deleted", None) for p in deleted if p not in renamed})
    return dict(sorted(out.items()))

