"""``render --out DIR --check``: what differs between DIR and what a render would write there.

Only regular files inside the folder are read, never what a link points at (OUT-LINK names it); the
report is the ``stale`` subject of the format registry (``renderer.formats``): text with a
unified diff per file on stderr, or a ``StaleFiles`` JSON document on stdout.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from renderer.errors import EXIT_FINDINGS, EXIT_OK, RenderError
from renderer.escape import json_text, printable, quote
from renderer.formats import Streams, reporter, show
from renderer.load.yamlio import display_path
from renderer.output.guard import MARK, _out_error, _write_error, cluster_folders

# --check reads at most this much of one committed file, and diffs files of at most this many lines
# (difflib's matcher is quadratic on hostile line sets); a larger file is reported stale, not shown.
MAX_CHECK_FILE_BYTES = 4 * 1024 * 1024
MAX_CHECK_DIFF_LINES = 20_000
MAX_CHECK_ENTRIES = 100_000


def _not_regular(path: Path, what: str) -> RenderError:
    return _out_error("OUT-LINK", f"{quote(display_path(path))} is {what}, not a regular file; --check reads only "
                                  "regular files inside the folder (never what a link points at)", path)


def _present(folder: Path) -> dict[str, Path]:
    """The committed files under ``folder`` (a dot-named entry and the mark excepted), without following
    any symlink: a link or special file is refused by name (issue 25 item 2), never opened."""
    import stat

    found: dict[str, Path] = {}
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return found
    except OSError as exc:
        raise _write_error(folder, exc) from None
    if stat.S_ISLNK(st.st_mode):
        raise _not_regular(folder, "a symlink")
    if not stat.S_ISDIR(st.st_mode):
        return found
    pending = [(folder, "")]
    while pending:
        here, prefix = pending.pop()
        try:
            with os.scandir(here) as listing:  # closed even when a read fails part-way
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            raise _write_error(here, exc) from None
        for entry in entries:
            rel = prefix + entry.name
            if entry.name.startswith(".") or rel == MARK:
                continue
            path = here / entry.name
            if entry.is_symlink():
                raise _not_regular(path, "a symlink")
            if entry.is_dir(follow_symlinks=False):
                pending.append((path, rel + "/"))
            elif entry.is_file(follow_symlinks=False):
                found[rel] = path
            else:
                raise _not_regular(path, "a special file (FIFO, socket or device)")
            if len(found) + len(pending) > MAX_CHECK_ENTRIES:
                raise _out_error("OUT-LINK", f"{quote(display_path(folder))} holds more than {MAX_CHECK_ENTRIES:,} "
                                             "entries; --check compares rendered folders only", folder)
    return dict(sorted(found.items()))


def _read_committed(path: Path) -> bytes | None:
    """A committed file's bytes, opened without following a link (a swap after the walk is refused by the
    kernel), only when it is a regular file; None when larger than ``MAX_CHECK_FILE_BYTES``."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, "not a regular file")
        if st.st_size > MAX_CHECK_FILE_BYTES:
            return None
        chunks, left = [], MAX_CHECK_FILE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return None if len(data) > MAX_CHECK_FILE_BYTES else data
    finally:
        os.close(fd)


def _committed_lines(path: Path) -> tuple[list[str] | None, str]:
    """(lines, "") or (None, why it is not compared line by line)."""
    try:
        data = _read_committed(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _not_regular(path, "a symlink") from None
        return None, f"unreadable: {exc.strerror or exc}"
    if data is None:
        return None, f"larger than {MAX_CHECK_FILE_BYTES:,} bytes"
    try:
        return data.decode("utf-8").splitlines(True), ""
    except UnicodeDecodeError:
        return None, "not UTF-8 text"


def stale_entries(out: Path, files: dict[str, str], all_clusters: bool = False) -> list[dict[str, Any]]:
    """What differs between ``out`` and what a render would write there: one entry per file, in order.

    Under ``--all`` only cluster folders are compared (a rendered one, or a marked one that would be
    removed); a user's files beside them are not cozy-render's business. Only regular files inside the
    folder are read (``_present``); a symlink or special file is an OUT-LINK error naming it.
    """
    import difflib

    entries: list[dict[str, Any]] = []
    folders = cluster_folders(out, files) if all_clusters else {out: files}
    if all_clusters and out.is_dir() and not out.is_symlink():
        for child in sorted(out.iterdir()):
            if child in folders or child.name.startswith("."):
                continue
            if child.is_symlink():
                raise _not_regular(child, "a symlink")
            if child.is_dir() and (child / MARK).is_file() and not (child / MARK).is_symlink():
                folders[child] = {}
    for folder, wanted in folders.items():
        present = _present(folder)
        for rel, content in wanted.items():
            path = folder / rel
            if rel not in present:
                entries.append({"file": str(path), "status": "missing",
                                "diff": _diff([], content.splitlines(True), path, difflib)})
                continue
            current, why = _committed_lines(present[rel])
            if current is None:
                status = why if why.startswith("unreadable") else "out of date"
                entries.append({"file": str(path), "status": status, "diff": "" if status != "out of date"
                                else f"({why})\n"})
                continue
            if "".join(current) != content:
                entries.append({"file": str(path), "status": "out of date",
                                "diff": _diff(current, content.splitlines(True), path, difflib)})
        for rel in sorted(set(present) - set(wanted)):
            path = folder / rel
            old, why = _committed_lines(present[rel])
            entries.append({"file": str(path), "status": "not rendered any more",
                            "diff": _diff(old, [], path, difflib) if old is not None else f"({why})\n"})
    return entries


def _diff(old: list[str], new: list[str], path: Path, difflib: Any) -> str:
    if len(old) > MAX_CHECK_DIFF_LINES or len(new) > MAX_CHECK_DIFF_LINES:
        return f"({len(old):,} lines committed, {len(new):,} rendered: too long to show a diff)\n"
    lines = list(difflib.unified_diff(old, new, _label(path, "a"), _label(path, "b")))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _label(path: Path, side: str) -> str:
    """A diff header's file, named as every printed path is (``display_path``: relative to the working
    folder, so an absolute ``--out`` inside the repository does not print ``a//abs/path``); a path that
    stays absolute (outside it) is shown without the ``a/``/``b/`` side."""
    shown = display_path(path)
    return shown if os.path.isabs(shown) else f"{side}/{shown}"


def stale_files(out: Path, files: dict[str, str], all_clusters: bool = False) -> list[str]:
    """One ``path: status`` line per stale or missing file (``--check``)."""
    return [f"{e['file']}: {e['status']}" for e in stale_entries(out, files, all_clusters)]


def _use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _coloured(diff: str) -> str:
    out = []
    for line in diff.splitlines(True):
        if line.startswith(("+++", "---")):
            out.append(f"\033[1m{line.rstrip(chr(10))}\033[0m\n")
        elif line.startswith("@@"):
            out.append(f"\033[36m{line.rstrip(chr(10))}\033[0m\n")
        elif line.startswith("+"):
            out.append(f"\033[32m{line.rstrip(chr(10))}\033[0m\n")
        elif line.startswith("-"):
            out.append(f"\033[31m{line.rstrip(chr(10))}\033[0m\n")
        else:
            out.append(line)
    return "".join(out)


def check_report(out: Path, files: dict[str, str], fmt: str = "yaml", stdout: TextIO | None = None,
                 stderr: TextIO | None = None, all_clusters: bool = False) -> int:
    """``render --out DIR --check``: report each stale or missing file in ``fmt`` (the ``stale`` reporters
    below); exit 1 when anything is stale, else 0."""
    entries = stale_entries(out, files, all_clusters)
    show("stale", fmt, entries, Streams(stdout or sys.stdout, stderr or sys.stderr))
    return EXIT_FINDINGS if entries else EXIT_OK


@reporter("stale", "json")
def _stale_json(entries: list[dict[str, Any]], streams: Streams) -> None:
    """A ``StaleFiles`` document on stdout (``cozy-render schema output render-check``); committed names are
    input: a non-UTF-8 one is escaped, not a crash."""
    from renderer.model import JSON_API_VERSION  # here: at the top it would load the overlay loader with -o

    streams.stdout.write(json_text({"apiVersion": JSON_API_VERSION, "kind": "StaleFiles", "stale": entries},
                                   indent=2, ensure_ascii=False) + "\n")


@reporter("stale", "yaml")
def _stale_text(entries: list[dict[str, Any]], streams: Streams) -> None:
    """render's default format: each stale file named, with its unified diff, on stderr. Committed files are
    pull-request input: their names and lines are printed escaped."""
    stream = streams.stderr
    colour = _use_colour(stream)
    for e in entries:
        stream.write(f"{printable(display_path(Path(e['file'])))}: {e['status']} (re-run cozy-render render --out)\n")
        if e["diff"]:
            diff = "".join(printable(line, 1 << 20) + "\n" for line in e["diff"].splitlines())
            stream.write(_coloured(diff) if colour else diff)
