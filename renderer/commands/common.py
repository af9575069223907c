"""Helpers several command bodies share: rendering a set of clusters, and the render cache."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from renderer import report
from renderer.errors import EXIT_OK, Finding, RenderError
from renderer.requests import cache_fields

if TYPE_CHECKING:  # the render cache's hit path imports no stage of the pipeline
    from renderer.emit import RenderResult
    from renderer.pipeline import Options


def rendered(path: Path, all_clusters: bool, options: Options,
             relevant: Callable[[Finding], bool] | None = None) -> list[RenderResult]:
    """``pipeline.run`` for commands that need the renders themselves: refused (every cluster's
    failures) unless every cluster renders; the warnings go to stderr (only the ``relevant`` ones,
    with a count of the rest, for a command that uses part of the render)."""
    from renderer.pipeline import run

    done = run(path, options, all_clusters=all_clusters)
    if done.exit_code:
        raise RenderError(done.failures(), done.exit_code)
    warnings = [f for _, f in done.tagged()]
    shown = [f for f in warnings if relevant is None or relevant(f)]
    report.write(shown)
    if len(shown) < len(warnings):
        sys.stderr.write(f"{len(warnings) - len(shown)} other warning(s) about the render: cozy-render check "
                         f"{path}{' --all' if all_clusters else ''}\n")
    return done.results


Produced = tuple[str, str, list[Path]]  # stdout, stderr, every file the render read


def write_cached(request: NamedTuple, target: Path, root: Path | None, produce: Callable[[], Produced],
                 key_fields: list[str] | None = None) -> int:
    """Write what ``produce`` renders, or replay it from the render cache (``renderer.cache``).

    The key covers the whole request (``renderer.requests.cache_fields``), so no option can be left
    out of it; the start-up fast path gives its own ``key_fields`` instead (``renderer.cache.argv_fields``:
    the raw arguments and the environment values the request was built from), which its hit looks up.
    """
    folder = os.environ.get("COZY_RENDER_CACHE_DIR")  # renderer.cache.ENV; not imported unless set
    if not folder:
        stdout, stderr, _ = produce()
    else:
        from renderer import cache
        from renderer.load.overlay import recording
        from renderer.load.roots import cluster_file_path, root_path

        # The same string work as a hit on the start-up fast path (renderer.cache.replay), so both find one entry.
        cluster_file = cluster_file_path(os.fspath(target))
        repo_root = os.path.realpath(os.fspath(root) if root else root_path(cluster_file))
        fields = key_fields if key_fields is not None else cache_fields(request)
        entry_key = cache.key(repo_root, cluster_file, fields, folder)
        hit = cache.lookup(folder, entry_key, repo_root)
        if hit is not None:
            stdout, stderr = hit
        else:
            with recording() as resolved:
                stdout, stderr, inputs = produce()
            cache.store(folder, entry_key, repo_root, inputs, stdout, stderr, resolved)
    sys.stderr.write(stderr)
    sys.stdout.write(stdout)
    return EXIT_OK
