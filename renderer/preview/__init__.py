"""``cozy-render diff --base REV [--head REV]``: review a change before it merges.

Renders every cluster the change reaches at both revisions, from trees written out of Git's object
store into a temporary folder (``renderer.preview.trees``; the head defaults to the working tree as
it is, dirty and untracked files included), and compares them with the live diff's normalisation,
masking and statuses (``renderer.preview.objects``), the rule findings each side reports, and the
platform's reaction: the effective Package set through the real chart with ``--chart helm`` (or
``auto`` and a helm), else the built-in model's prediction (``renderer.preview.platform``): the same
choice and default as ``check`` (``renderer.effective.choice``; model never runs helm).
``renderer.preview.report`` prints text, JSON or a Markdown PR comment.

Exit codes as ``diff``: 0 no change, 1 changes (with ``--fail-on-new-errors``: only new error
findings), 2 usage, 3 input or Git errors.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from renderer import formats, shard
from renderer import shard_report as sharded
from renderer.effective.choice import choose
from renderer.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Finding, RenderError
from renderer.preview import report
from renderer.preview import review as reviewing  # as a module: the package's `review` is that module
from renderer.preview.platform import Reactor
from renderer.preview.review import Options
from renderer.preview.trees import find_repository, remove, resolve, working_tree, write_tree

if TYPE_CHECKING:
    from renderer.preview.review import Review

MARKDOWN_LIMIT = 65_536  # characters GitHub accepts in an issue or pull-request comment body


class PreviewRequest(NamedTuple):
    """Everything ``diff --base`` needs; the defaults here are the CLI's defaults."""

    path: Path
    base: str
    head: str | None = None  # None: the working tree as it is
    all_clusters: bool = False
    variants: Path | None = None
    root: Path | None = None
    kubernetes_version: str | None = None
    ignore: tuple[str, ...] = ()
    show_secrets: bool = False
    output: str = "text"  # text | json | markdown
    color: str = "auto"  # auto | always | never
    exit_zero: bool = False
    fail_on_new_errors: bool = False  # exit 1 only when the head adds error findings
    chart: str | None = None  # --chart model | helm | auto, as check has it (renderer.effective.choice)
    helm: str | None = None  # with --chart helm/auto; default: helm on PATH
    platform_chart: Path | None = None
    select: bool = True  # render only clusters whose inputs changed (False: every cluster, both sides)
    shard: str | None = None  # --shard K/N with --all: review only this part of the fleet (renderer.shard)
    markdown_limit: int = MARKDOWN_LIMIT


# Options of the live diff that mean nothing between two revisions.
LIVE_ONLY = ("snapshot", "against", "kubeconfig", "context", "server_side", "field_manager", "timeout",
             "concurrency", "effective")


def refuse_live_options(given: dict[str, object]) -> None:
    """A live-diff option with --base is a usage error (exit 2), not silently ignored."""
    named = sorted(f"--{k.replace('_', '-')}" for k in LIVE_ONLY if given.get(k) not in (None, False))
    if named:
        raise RenderError([Finding("DIFF-USAGE", f"{', '.join(named)} compare with a live cluster; --base/--head "
                                   "compare two revisions: give one or the other")], EXIT_USAGE)


def run_options(base: str | None, head: str | None, fail_on_new_errors: bool, options: dict[str, Any]) -> int:
    """The ``diff`` command's options with ``--base``/``--head``/``--fail-on-new-errors`` given."""
    if base is None:
        raise RenderError([Finding("DIFF-USAGE", "--head and --fail-on-new-errors review a change: give --base REV "
                                   "(the revision it starts from)")], EXIT_USAGE)
    refuse_live_options(options)
    kept = {k: v for k, v in options.items() if k not in LIVE_ONLY and v is not None}
    return run(PreviewRequest(base=base, head=head, fail_on_new_errors=fail_on_new_errors, **kept))


def run(request: PreviewRequest, stdout: TextIO | None = None, _stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout

    part = shard.requested(request.shard, request.all_clusters)
    result = collect(request)
    payload = report.ReviewReport(result, report.rerun_command(request), request.markdown_limit, request.color)
    if part is not None and request.output == "json":  # a shard's report for `merge`

        section = sharded.section(part, "diff", request, [(c.name, c.name) for c in result.clusters])
        # the whole review, losslessly: a merged text or Markdown report needs every diff and finding
        # (the sides without this runner's scratch folder and blob list; the chart is the document's)
        sides = [s._replace(root=Path("."), blobs=None) for s in (result.base, result.head)]
        section["review"] = sharded.encode(result._replace(base=sides[0], head=sides[1], chart=None))
        section["rerun"] = payload.command
        sharded.show_json("review", payload, section, out)
    else:
        formats.show("review", request.output, payload, formats.Streams(out, _stderr or sys.stderr))
    out.flush()
    return exit_code(result, request.fail_on_new_errors, request.exit_zero)


def exit_code(result: Review, fail_on_new_errors: bool, exit_zero: bool) -> int:
    """0 no change, 1 changes (with ``--fail-on-new-errors``: only new error findings)."""
    if fail_on_new_errors:
        return EXIT_FINDINGS if any(c.new_errors for c in result.clusters) else EXIT_OK
    if result.different and not exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def collect(request: PreviewRequest) -> Review:
    """The review of the change: both sides written to a scratch folder, rendered, compared, removed."""
    path = Path(os.path.abspath(request.path))
    repository = find_repository(path)
    repo = repository.top
    options = Options(_inside(repo, path, "PATH"), request.all_clusters,
                      _relative(repo, Path(os.path.abspath(request.variants))) if request.variants else None,
                      None, _inside(repo, Path(os.path.abspath(request.root)), "--root") if request.root else "",
                      request.kubernetes_version, tuple(request.ignore), request.show_secrets, request.select)
    if request.shard is not None:
        options = options._replace(shard=shard.parse(request.shard))
    if request.variants is not None and options.rel_variants is None:
        options = options._replace(variants_outside=Path(os.path.abspath(request.variants)))

    choice = choose(request.chart, request.helm)  # model (the default) never looks for helm
    reactor = Reactor(choice.helm if choice.mode == "helm" else None, request.platform_chart)
    base_commit = resolve(repository, request.base)
    head_commit = resolve(repository, request.head) if request.head is not None else None
    # A private scratch root (mkdtemp: mode 0700), removed on every exit path.
    scratch = Path(tempfile.mkdtemp(prefix="cozy-render-preview-"))
    try:
        (scratch / "base").mkdir()
        base = write_tree(repository, base_commit, request.base, scratch / "base")
        if head_commit is not None and request.head is not None:
            (scratch / "head").mkdir()
            head = write_tree(repository, head_commit, request.head, scratch / "head")
        else:
            head = working_tree(repository)
        return reviewing.review(base, head, options, reactor, repository)._replace(chart=choice)
    finally:
        remove(scratch)


def _inside(repo: Path, path: Path, flag: str) -> str:
    """``path`` relative to the repository top ("" for the top); outside it: a usage error."""
    rel = _relative(repo, path)
    if rel is None:
        raise RenderError([Finding("DIFF-USAGE", f"{flag} {path} is outside the repository {repo}: --base/--head "
                                   "render the repository's own revisions")], EXIT_USAGE)
    return rel


def _relative(repo: Path, path: Path) -> str | None:
    resolved = path.resolve() if path.exists() else path
    try:
        text = resolved.relative_to(repo).as_posix()
    except ValueError:
        return None  # --variants outside the repository: the same folder on both sides
    return "" if text == "." else text

