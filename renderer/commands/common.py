"""Helpers several command bodies share: rendering a set of clusters, and the render cache."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from renderer import report
from renderer.errors import EXIT_OK
from renderer.requests import cache_fields

if TYPE_CHECKING:  # the render cache's hit path imports no stage of the pipeline
    from renderer.emit import RenderResult


def render_reporting_warnings(paths: list[Path], variants: Path | None, root: Path | None, strict: bool,
                              kubernetes_version: str | None = None, validator: str = "auto") -> list[RenderResult]:
    """Render every path (all failures collected before raising); warnings go to stderr."""
    from renderer.pipeline import render_many

    results, warnings = render_many(paths, variants=variants, root=root, strict=strict,
                                    kubernetes_version=kubernetes_version, validator=validator)
    report.write(warnings)
    return results


Produced = tuple[str, str, list[Path]]  # stdout, stderr, every file the render read


def write_cached(request: NamedTuple, target: Path, root: Path | None, produce: Callable[[], Produced]) -> int:
    """Write what ``produce`` renders, or replay it from the render cache (``renderer.cache``).

    The key covers the whole request (``renderer.requests.cache_fields``), so no option can be left
    out of it.
    """
    folder = os.environ.get("COZY_RENDER_CACHE_DIR")  # renderer.cache.ENV; not imported unless set
    if not folder:
        stdout, stderr, _ = produce()
    else:
        from renderer import cache
        from renderer.load.overlay import find_cluster_file, find_root

        cluster_file = find_cluster_file(target)
        repo_root = (root or find_root(cluster_file)).resolve()
        entry_key = cache.key(repo_root, cluster_file, cache_fields(request))
        hit = cache.lookup(Path(folder), entry_key, repo_root)
        if hit is not None:
            stdout, stderr = hit
        else:
            stdout, stderr, inputs = produce()
            cache.store(Path(folder), entry_key, repo_root, inputs, stdout, stderr)
    sys.stderr.write(stderr)
    sys.stdout.write(stdout)
    return EXIT_OK
