"""Fleet runs a person can watch: ``render --all`` and ``check --all`` with a terminal on stderr.

On a terminal the clusters are rendered under Click's progress bar (an observer of
``pipeline.run``), identical warnings across clusters are printed once with a count and the first
few cluster names (``-v``: every line), and a summary line ends the run (clusters, objects, errors,
warnings, time). Only the presentation differs: a terminal and a pipe run the same ``pipeline.run``
and get the same findings and exit code. stdout never carries any of this.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, TextIO

import click

from renderer import pipeline, shard
from renderer.errors import WARNING, Finding
from renderer.pipeline import ClusterRun, Keep, Options, Run

NAMES_SHOWN = 3


def watching(stream: TextIO | None = None) -> bool:
    """A person is watching: stderr is a terminal."""
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """The run's observer on a terminal: Click's progress bar on stderr, one step per cluster."""

    def __init__(self, total: int, label: str) -> None:
        self.started = time.monotonic()
        self._bar = click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True,
                                      item_show_func=lambda name: name)
        self._bar.__enter__()

    def __call__(self, cluster: ClusterRun) -> None:
        self._bar.update(1, cluster.name)

    def close(self) -> float:
        self._bar.__exit__(None, None, None)
        return time.monotonic() - self.started


def run_watched(path: Path, options: Options, *, all_clusters: bool, watched: bool, label: str,
                keep: Keep | None = None) -> tuple[Run, float]:
    """``pipeline.run``, under a progress bar when a person watches; returns the run and its seconds."""
    if not watched:
        started = time.monotonic()
        return pipeline.run(path, options, all_clusters=all_clusters, keep=keep), time.monotonic() - started

    total = len(shard.select(pipeline.cluster_paths(path, all_clusters), options.shard))
    progress = Progress(total, label)
    try:
        done = pipeline.run(path, options, all_clusters=all_clusters, observer=progress, keep=keep)
    finally:
        seconds = progress.close()
    return done, seconds


def grouped_text(tagged: list[tuple[str, Finding]], verbose: bool = False) -> str:
    """Finding lines; a warning several clusters share is one line with a count and names."""
    if verbose:
        return "".join(f.format() + "\n" for _, f in tagged)
    # A repeated warning is shown at its first copy's location: the same line when it is in a shared
    # base, the first cluster's file when each cluster has its own.
    first: dict[tuple[str, str], Any] = {}
    for _, finding in tagged:
        if finding.severity == WARNING:
            first.setdefault((finding.code, finding.message), finding.location)
    clusters: dict[Finding, list[str]] = {}
    for name, finding in tagged:
        key = finding if finding.severity != WARNING else \
            finding._replace(location=first[finding.code, finding.message])
        names = clusters.setdefault(key, [])
        if name not in names:
            names.append(name)
    lines = []
    for finding, names in clusters.items():
        line = finding.format()
        if finding.severity == WARNING and len(names) > 1:
            shown = ", ".join(names[:NAMES_SHOWN]) + (", ..." if len(names) > NAMES_SHOWN else "")
            line += f"  [{len(names)} clusters: {shown}; -v prints each]"
        lines.append(line + "\n")
    return "".join(lines)


def summary_line(clusters: int, objects: int, errors: int, warnings: int, seconds: float) -> str:
    return (f"{clusters} clusters, {objects} objects, {errors} error{'s' * (errors != 1)}, "
            f"{warnings} warning{'s' * (warnings != 1)} in {seconds:.1f}s\n")
