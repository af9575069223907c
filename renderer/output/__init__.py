"""Serialise rendered objects: a YAML stream, a JSON list, or kustomize folders written atomically.

One module per job: ``serialise`` (the stream, the JSON ``List``, a folder's files), ``guard`` (which
folders are ours, the refusals before a write), ``write`` (the locked, atomic swap and its remover
thread) and ``check`` (``--check``'s report). This package re-exports the names callers use and
composes ``render --out``: guard, then check or write.

``--out`` folders (SECURITY.md, README "Output folders"):

- cozy-render writes only folders it owns: each cluster folder it writes carries the mark file
  ``.cozy-render`` (folders from before the mark, whose kustomization.yaml is ours and lists every
  file there, count as ours). It refuses to replace a non-empty folder without it, and refuses an
  ``--out`` that is, contains or sits inside the overlay repository's inputs, or is a filesystem root.
- ``--all --out DIR`` manages only the marked cluster folders in DIR: a vanished cluster's folder is
  removed only when marked, everything else in DIR (a README.md, node-config's nodes/) stays.
- Each cluster folder is swapped in with one atomic ``renameat2(RENAME_EXCHANGE)``; where the OS or
  file system lacks it, two renames, with a crash between them repaired on the next run. After any
  interruption every cluster folder is wholly old or wholly new; staging folders a killed run left
  (marked, their process gone) are removed by the next run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from renderer.errors import EXIT_OK
from renderer.output.check import (
    MAX_CHECK_DIFF_LINES,
    MAX_CHECK_ENTRIES,
    MAX_CHECK_FILE_BYTES,
    check_report,
    stale_entries,
    stale_files,
)
from renderer.output.guard import (
    MARK,
    MARK_TEXT,
    NODE_MARK,
    NODE_MARK_TEXT,
    SCHEMAS_MARK,
    SCHEMAS_MARK_TEXT,
    _refuse_foreign,
    cluster_folders,
    is_generated_tree,
    is_ours,
    refuse_unsafe_target,
)
from renderer.output.serialise import KUSTOMIZATION, directory_files, file_name, to_json, to_yaml
from renderer.output.write import FAULT_ENV, LOCK_WAIT_SECONDS, _umask, locked, write_clusters, write_tree

__all__ = [
    "FAULT_ENV",
    "KUSTOMIZATION",
    "LOCK_WAIT_SECONDS",
    "MARK",
    "MARK_TEXT",
    "MAX_CHECK_DIFF_LINES",
    "MAX_CHECK_ENTRIES",
    "MAX_CHECK_FILE_BYTES",
    "NODE_MARK",
    "NODE_MARK_TEXT",
    "SCHEMAS_MARK",
    "SCHEMAS_MARK_TEXT",
    "_umask",
    "check_report",
    "cluster_folders",
    "directory_files",
    "file_name",
    "guard_out",
    "is_generated_tree",
    "is_ours",
    "locked",
    "refuse_unsafe_target",
    "stale_entries",
    "stale_files",
    "to_json",
    "to_yaml",
    "write_clusters",
    "write_out",
    "write_tree",
]


def guard_out(out: Path, results: list[Any], all_clusters: bool, check_only: bool = False,
              fmt: str = "yaml", files: dict[str, str] | None = None) -> int | None:
    """Refuse an unsafe ``--out`` before anything is written; under ``--check`` report and return the exit code.

    ``results`` are the renders (``renderer.model.RenderResult``); everything they read is protected.
    Returns None when the caller should go on and write.
    """
    target = refuse_unsafe_target(out, results, all_clusters)
    for folder in (cluster_folders(target, files or {}) if all_clusters else {target: {}}):
        _refuse_foreign(folder)  # --check too: a user's folder is never read back and printed
    if check_only:
        return check_report(out, files or {}, fmt, all_clusters=all_clusters)
    return None


def write_out(out: Path, files: dict[str, str], results: list[Any], all_clusters: bool, check_only: bool = False,
              fmt: str = "yaml", shard: Any = None) -> int:
    """``render --out``: refuse an unsafe folder, then check (``--check``) or write; returns the exit code."""
    code = guard_out(out, results, all_clusters, check_only, fmt, files)
    if code is not None:
        return code
    write_clusters(out, files, all_clusters, results, guarded=True, shard=shard)
    return EXIT_OK
