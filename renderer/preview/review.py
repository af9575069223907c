"""Rendering both sides of a change and comparing them, cluster by cluster.

Which clusters are rendered: a render is a pure function of the files it reads (README "Regenerating
only what changed"; ``renderer.inputs``). So a cluster present on both sides whose base render reads
no file that differs between the sides renders the same at the head, and neither side is rendered:
``renderer.inputs.cluster_inputs`` at the base says what it reads. When no file differs at all, no
cluster is even probed. A cluster only one side has is rendered on that side; ``--variants`` inside
the repository changing reaches every cluster (a new override file is read without any base file
changing). ``select=False`` renders everything (the tests prove both give the same review).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from renderer import batch, shard
from renderer.diff.compare import DIFFERENT, key_of, parse_ignore, ref
from renderer.errors import ERROR, WARNING, Finding, Location, RenderError
from renderer.escape import quote
from renderer.inputs import cluster_inputs, variant_overrides
from renderer.load.overlay import load_overlay
from renderer.load.yamlio import display_relative_to
from renderer.model import PLATFORM_PACKAGE
from renderer.pipeline import Options as RunOptions
from renderer.pipeline import cluster_paths, run
from renderer.preview.objects import ObjectChange, compare_objects
from renderer.preview.platform import PlatformDelta, Reactor
from renderer.preview.trees import Repository, Side, changed_paths, path_changes

ADDED, REMOVED, CHANGED, UNCHANGED, RENAMED = "added", "removed", "changed", "unchanged", "renamed"
# What one side of one cluster is: not in that revision, rendered, refused (``render`` would exit 3:
# an error finding, or no render at all; Argo CD's plugin generates nothing there, so nothing syncs),
# or not rendered because it reads no changed file.
ABSENT, RENDERED, REFUSED, SKIPPED = "absent", "rendered", "refused", "not-rendered"


class Rendered(NamedTuple):
    """One side of one cluster: the result (None when the render failed) and its findings."""

    result: Any | None
    findings: list[Finding]
    inputs: list[str]  # repository-relative files the render read

    @property
    def failed(self) -> bool:
        return self.result is None

    @property
    def refusing(self) -> list[Finding]:
        """The findings that make ``render`` refuse this side (exit 3): its errors."""
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def refused(self) -> bool:
        return self.result is None or bool(self.refusing)

    @property
    def objects(self) -> list[dict[str, Any]]:
        return [e.obj for e in self.result.objects] if self.result is not None else []

    @property
    def platform_version(self) -> str | None:
        """The platform chart version this side's render uses (``platform.version`` or the default)."""
        if self.result is None:
            return None
        return str(self.result.plan.facts.version)


class Prune(NamedTuple):
    """What dropping a cluster's Application does (the ApplicationSet's default resources finalizer:
    Argo CD deletes what the Application synced), and what stays: every Package the platform chart
    renders carries ``helm.sh/resource-policy: keep`` (reference rule PLT-09)."""

    pruned: list[str]  # the objects the base rendered, kind/namespace/name
    kept: list[str]  # platform-made Packages that stay installed


class InputChange(NamedTuple):
    """One changed file and the clusters whose render (at either side) reads it."""

    path: str
    change: str  # added | modified | deleted | renamed
    renamed_from: str | None
    kind: str  # file | variants (a --variants override)
    reaches: list[str]


class VersionChange(NamedTuple):
    """A ``platform.version`` change: the chart the platform release renders, and the clusters it reaches."""

    base: str
    head: str
    reaches: list[str]


class ClusterReview(NamedTuple):
    name: str
    status: str  # added | removed | changed | unchanged
    rendered: bool  # False: no input changed, so neither side was rendered
    objects: list[ObjectChange]
    introduced: list[Finding]
    resolved: list[Finding]
    platform: PlatformDelta | None
    base_state: str  # absent | rendered | refused | not-rendered
    head_state: str
    changed_inputs: list[str]  # the changed files this cluster reads (why it was rendered)
    refusing_base: tuple[Finding, ...] = ()  # the errors that refuse the base's render (base_state refused)
    refusing_head: tuple[Finding, ...] = ()
    versions: tuple[str | None, str | None] = (None, None)  # platform.version at the base and the head
    renamed_from: str | None = None  # status renamed: the cluster folder's name at the base
    prune: Prune | None = None  # removed or renamed: what Argo CD deletes, what stays
    notes: tuple[Finding, ...] = ()  # the preview's own warnings about this cluster (PLT-09)

    @property
    def new_errors(self) -> list[Finding]:
        return [f for f in self.introduced if f.severity == ERROR]

    @property
    def base_failed(self) -> bool:
        return self.base_state == REFUSED

    @property
    def head_failed(self) -> bool:
        return self.head_state == REFUSED

    @property
    def version_bump(self) -> tuple[str, str] | None:
        old, new = self.versions
        return (old, new) if old is not None and new is not None and old != new else None


class Review(NamedTuple):
    base: Side
    head: Side
    clusters: list[ClusterReview]
    inputs: list[InputChange]  # every changed file some render reads, with the clusters it reaches
    rendered_base: int
    rendered_head: int
    probed: int  # clusters whose inputs were read to decide
    platform_source: str
    helm_runs: int
    versions: list[VersionChange] = []  # noqa: RUF012 - a NamedTuple default, never mutated
    findings: list[Finding] = []  # noqa: RUF012 - the preview's own warnings (PLT-09), every cluster's
    chart: Any = None  # the ChartChoice (renderer.effective.choice) that judged the platform's reaction

    @property
    def reaches(self) -> dict[str, list[str]]:
        return {i.path: i.reaches for i in self.inputs}

    @property
    def different(self) -> bool:
        return any(c.status != UNCHANGED for c in self.clusters)


class Options(NamedTuple):
    rel_path: str  # PATH relative to the repository top ("" for the top itself)
    all_clusters: bool
    rel_variants: str | None  # --variants inside the repository (mapped onto each side)
    variants_outside: Path | None  # --variants outside it (the same on both sides)
    rel_root: str  # --root relative to the repository top ("" : the top)
    kubernetes_version: str | None
    ignore: tuple[str, ...]
    show_secrets: bool
    select: bool
    shard: Any = None  # --shard K/N (renderer.shard.Shard): review only the clusters of this shard


# Clusters compared at a time: their platform charts are rendered ahead in one helm process
# (renderer.effective.helm.BATCH), and their two renders are held until then.
COMPARE_CHUNK = 40


def review(base: Side, head: Side, options: Options, reactor: Reactor, repo: Repository | None = None) -> Review:
    base_clusters = _clusters(base, options)
    head_clusters = _clusters(head, options)
    if not base_clusters and not head_clusters:
        where = options.rel_path or "."
        raise RenderError([Finding("OVL-PATH", f"{where}: no cluster overlay at the base ({base.label}) nor at the "
                                   f"head ({head.label})")])
    changed = changed_paths(base, head, repo)
    how = path_changes(base, head, changed, repo) if changed else {}
    # A file renamed is one input: its old path (which the base read) counts under its new one.
    alias = {source: path for path, (_, source) in how.items() if source is not None}
    renames = _renames(base_clusters, head_clusters)
    variants_changed = options.rel_variants is not None and any(_under(p, options.rel_variants) for p in changed)
    counts = Counter[str]()
    reaches: dict[str, set[str]] = {}

    # The clusters to compare are compared a chunk at a time, after their charts are rendered ahead
    # many to a helm process (Reactor.prepare); the chunk keeps each review in its place.
    slots: list[ClusterReview | None] = []
    pending: list[tuple[int, str, Rendered | None, Rendered | None, list[str]]] = []

    def compare_pending() -> None:
        reactor.prepare([(b.result if b else None, a.result if a else None) for _, _, b, a, _ in pending
                         if not (b is not None and b.refused) and not (a is not None and a.refused)])
        for index, name, before, after, mine in pending:
            slots[index] = _compare(name, before, after, options, reactor, mine, renames.get(name))
        pending.clear()

    names = sorted((set(base_clusters) | set(head_clusters)) - set(renames.values()))
    if options.shard is not None:  # a renamed cluster goes with its new name, as one run lists it

        names = shard.select(names, options.shard)
    for name in batch.clusters(names):  # the collector paused between
        at_base, at_head = base_clusters.get(renames.get(name, name)), head_clusters.get(name)
        reads: list[str] = []
        if at_base is not None and at_head is not None and options.select and not variants_changed:
            if not changed:
                slots.append(_unchanged(name))
                continue
            if not _layers(base, at_base, options) & changed:
                counts["probed"] += 1
                reads = _inputs(base, at_base, options)
                if reads and not set(reads) & changed:
                    slots.append(_unchanged(name))
                    continue
        before = _render(base, at_base, options) if at_base is not None else None
        after = _render(head, at_head, options) if at_head is not None else None
        counts["base"] += before is not None
        counts["head"] += after is not None
        touched = set(reads or (before.inputs if before is not None else [])) | \
            set(after.inputs if after is not None else [])
        for side, folder, rendered in ((base, at_base, before), (head, at_head, after)):
            if rendered is not None and rendered.failed and folder is not None:  # read before it failed
                touched.add((folder / "cluster.yaml").relative_to(side.root).as_posix())
        mine = sorted({alias.get(p, p) for p in touched & changed})
        if at_head is None:  # a removed cluster is reached by the files it no longer has, not by their edits
            mine = [p for p in mine if how.get(p, ("modified", None))[0] == "deleted"]
        for path in mine:
            reaches.setdefault(path, set()).add(name)
        slots.append(None)
        pending.append((len(slots) - 1, name, before, after, mine))
        if len(pending) >= COMPARE_CHUNK:
            compare_pending()
    compare_pending()
    reviews = [r for r in slots if r is not None]
    inputs = []
    for path, clusters in sorted(reaches.items()):
        change, source = how.get(path, ("modified", None))
        kind = "variants" if options.rel_variants is not None and _under(path, options.rel_variants) else "file"
        inputs.append(InputChange(path, change, source, kind, sorted(clusters)))
    bumps: dict[tuple[str, str], list[str]] = {}
    for r in reviews:
        if r.version_bump is not None:
            bumps.setdefault(r.version_bump, []).append(r.name)
    return Review(base, head, reviews, inputs, counts["base"], counts["head"], counts["probed"], reactor.source,
                  reactor.helm_runs, [VersionChange(old, new, names) for (old, new), names in sorted(bumps.items())],
                  [f for r in reviews for f in r.notes])


def _renames(base_clusters: dict[str, Path], head_clusters: dict[str, Path]) -> dict[str, str]:
    """New cluster folder name -> old: a folder only the base has and one only the head has holding the
    same files, byte for byte once the new name is read as the old one (a ``git mv`` with
    ``metadata.name`` renamed, as OVL-NAME requires). Argo CD sees a removed cluster and an added one;
    the review says both."""
    gone = {n: p for n, p in base_clusters.items() if n not in head_clusters}
    new = {n: p for n, p in head_clusters.items() if n not in base_clusters}
    if not gone or not new:
        return {}
    old_files = {n: _folder_files(p) for n, p in sorted(gone.items())}
    out: dict[str, str] = {}
    for name, folder in sorted(new.items()):
        files = _folder_files(folder)
        for old, before in old_files.items():
            if files is not None and before is not None and old not in out.values() and \
                    files.keys() == before.keys() and \
                    all(files[rel].replace(os.fsencode(name), os.fsencode(old)) == before[rel] for rel in files):
                out[name] = old
                break
    return out


RENAME_FILES, RENAME_BYTES = 64, 1 << 20  # a folder compared for a rename: at most this many files and bytes


def _folder_files(folder: Path) -> dict[str, bytes] | None:
    """A cluster folder's regular files by relative name (None: too many or too large to compare),
    read without following a link."""
    out: dict[str, bytes] = {}
    total = 0
    for where, dirs, files in os.walk(folder):  # os.walk never descends through a link
        dirs.sort()
        for name in sorted(files):
            path = Path(where, name)
            if not path.is_file() or path.is_symlink():
                continue
            total += path.stat().st_size
            if len(out) >= RENAME_FILES or total > RENAME_BYTES:
                return None
            out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


def _under(path: str, folder: str) -> bool:
    return folder in ("", ".") or path == folder or path.startswith(folder.rstrip("/") + "/")


def _side_path(side: Side, rel: str) -> Path:
    return side.root / rel if rel else side.root


def _clusters(side: Side, options: Options) -> dict[str, Path]:
    """Cluster folder name -> folder, on this side (as ``render``/``--all`` find them)."""
    path = _side_path(side, options.rel_path)
    if options.all_clusters:
        if not path.is_dir():
            return {}
        try:
            return {p.name: p for p in cluster_paths(path, True)}
        except RenderError:
            return {}
    folder = path.parent if path.name == "cluster.yaml" else path
    return {folder.name: folder} if (folder / "cluster.yaml").is_file() else {}


def _variants(side: Side, options: Options) -> Path | None:
    if options.rel_variants is not None:
        return _side_path(side, options.rel_variants)
    return options.variants_outside


def _layers(side: Side, folder: Path, options: Options) -> set[str]:
    """The overlay layers the cluster's render reads on this side (its ``inherits`` chain): loading
    them costs a fraction of a render (shared layers are parsed once per process), and when one of
    them changed the cluster is reached without asking ``cluster_inputs`` (empty: cannot tell)."""
    root = _side_path(side, options.rel_root)
    try:
        with display_relative_to(side.root):
            layers = load_overlay(folder, root).layers
    except RenderError:
        return set()
    top = side.root.resolve()
    return {p.resolve().relative_to(top).as_posix() for p in layers if top in p.resolve().parents}


def _inputs(side: Side, folder: Path, options: Options) -> list[str]:
    """What the cluster's render reads on this side ([] when it cannot tell: render it then)."""
    root = _side_path(side, options.rel_root)
    try:
        with display_relative_to(side.root):
            listed = cluster_inputs(folder, _variants(side, options), root)["inputs"]
    except RenderError:
        return []
    return [_repo_relative(root, side.root, p) for p in listed]


def _repo_relative(root: Path, top: Path, rel: str) -> str:
    return (root / rel).relative_to(top).as_posix()


def _render(side: Side, folder: Path, options: Options) -> Rendered:
    root = _side_path(side, options.rel_root)
    with display_relative_to(side.root):
        try:
            result = run(folder, RunOptions(_variants(side, options), root, refuse=False,
                                            kubernetes_version=options.kubernetes_version)).one()
        except RenderError as exc:
            return Rendered(None, exc.findings, [])

    top = side.root.resolve()
    read = [*result.inputs, *variant_overrides(result.variants)]  # a --variants override is an input too
    inputs = sorted({p.resolve().relative_to(top).as_posix() for p in read if top in p.resolve().parents})
    return Rendered(result, list(result.findings), inputs)


def _unchanged(name: str) -> ClusterReview:
    return ClusterReview(name, UNCHANGED, False, [], [], [], None, SKIPPED, SKIPPED, [])


def _finding_key(f: Finding) -> tuple[str, str, str, str]:
    """A finding's identity across the sides: code, severity, file and message, not the line (an
    edit above it moves it without changing it)."""
    return (f.code, f.severity, f.location.path if f.location else "", f.message)


def findings_delta(before: list[Finding], after: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(introduced, resolved), as multisets of ``_finding_key``."""
    old = Counter(_finding_key(f) for f in before)
    new = Counter(_finding_key(f) for f in after)
    introduced, resolved = [], []
    for f in after:
        if old[_finding_key(f)] > 0:
            old[_finding_key(f)] -= 1
        else:
            introduced.append(f)
    for f in before:
        if new[_finding_key(f)] > 0:
            new[_finding_key(f)] -= 1
        else:
            resolved.append(f)
    return introduced, resolved


def _compare(name: str, before: Rendered | None, after: Rendered | None, options: Options, reactor: Reactor,
             changed_inputs: list[str], renamed_from: str | None = None) -> ClusterReview:
    introduced, resolved = findings_delta(before.findings if before else [], after.findings if after else [])
    if not options.show_secrets:
        secrets = secret_values([*(before.objects if before else []), *(after.objects if after else [])])
        introduced, resolved = scrub(introduced, secrets), scrub(resolved, secrets)
    ignores = [parse_ignore(text, "--ignore") for text in options.ignore]
    overlay_side = after if after is not None and after.result is not None else before
    if overlay_side is not None and overlay_side.result is not None:
        overlay = overlay_side.result.overlay
        ignores += [parse_ignore(str(text), "diff.ignore", overlay.locate(("diff", "ignore", i)))
                    for i, text in enumerate(overlay.get("diff", "ignore") or [])]
    base_failed = before is not None and before.refused
    head_failed = after is not None and after.refused
    objects: list[ObjectChange] = []
    platform = None
    # A refused side syncs nothing (the plugin generates nothing): no objects, no platform reaction.
    if not base_failed and not head_failed:
        objects = compare_objects(before.objects if before else [], after.objects if after else [], ignores,
                                  show_secrets=options.show_secrets)
        platform = reactor.delta(before.result if before else None, after.result if after else None)
    if before is None:
        status = ADDED
    elif after is None:
        status = REMOVED
    elif renamed_from is not None:
        status = RENAMED
    elif introduced or resolved or any(o.status in DIFFERENT for o in objects) or \
            (platform is not None and platform.different) or base_failed != head_failed:
        status = CHANGED
    else:
        status = UNCHANGED
    secrets = [] if options.show_secrets else secret_values(
        [*(before.objects if before else []), *(after.objects if after else [])])

    def state(side: Rendered | None) -> str:
        return ABSENT if side is None else REFUSED if side.refused else RENDERED

    prune, notes = _prune(name, status, before, platform, reactor, renamed_from)
    return ClusterReview(name, status, True, objects, introduced, resolved, platform, state(before), state(after),
                         changed_inputs, tuple(scrub(before.refusing, secrets)) if base_failed and before else (),
                         tuple(scrub(after.refusing, secrets)) if head_failed and after else (),
                         (before.platform_version if before else None, after.platform_version if after else None),
                         renamed_from, prune, notes)


def _prune(name: str, status: str, before: Rendered | None, platform: PlatformDelta | None, reactor: Reactor,
           renamed_from: str | None) -> tuple[Prune | None, tuple[Finding, ...]]:
    """What Argo CD deletes and what stays when the cluster's Application goes (removed, renamed), and
    PLT-09 for every platform-made Package that stops being rendered but stays installed."""
    where = Location(before.result.overlay.cluster_file.relative_to(before.result.overlay.root).as_posix()) \
        if before is not None and before.result is not None and _inside_root(before.result.overlay) else None
    if status in (REMOVED, RENAMED) and before is not None and not before.refused:
        pruned = sorted({ref(key_of(obj)) for obj in before.objects})
        if status == REMOVED:
            kept = [c.name for c in (platform.changes if platform else []) if c.status == "removed"]
        else:
            effective = reactor.effective(before.result)
            kept = sorted(n for n, (origin, _) in effective.packages.items() if origin not in (None, "cozy-render"))
        what = (f"{quote(name)} is removed" if status == REMOVED else
                f"{quote(renamed_from)} is renamed {quote(name)}")
        message = (f"{what}: the ApplicationSet deletes its Application and Argo CD prunes the {len(pruned)} "
                   f"object(s) it synced, the platform Package {PLATFORM_PACKAGE} among them; the {len(kept)} "
                   "Package(s) the platform release made stay installed (resource-policy keep)"
                   + ("; delete the Package CRs to uninstall." if status == REMOVED else
                      f", and the Application for {quote(name)} creates the platform Package again."))
        return Prune(pruned, kept), (Finding("PLT-09", message, where, WARNING),)
    notes = tuple(Finding("PLT-09", f"{c.name} is no longer rendered but stays installed (resource-policy keep); "
                          "delete the Package CR to uninstall.", where, WARNING)
                  for c in (platform.changes if platform is not None and status != ADDED else [])
                  if c.status == "removed")
    return None, notes


def _inside_root(overlay: Any) -> bool:
    return overlay.root in overlay.cluster_file.parents


def secret_values(objects: list[dict[str, Any]]) -> list[str]:
    """Every Secret value of these objects as it could appear in a message: as written, base64 and
    decoded (longest first, so a value containing another is replaced whole)."""
    import base64
    import binascii
    import contextlib

    found: set[str] = set()
    for obj in objects:
        if obj.get("apiVersion") != "v1" or obj.get("kind") != "Secret":
            continue
        for field in ("data", "stringData"):
            values = obj.get(field)
            for value in (values.values() if isinstance(values, dict) else []):
                text = str(value)
                found.add(text)
                if field == "stringData":
                    found.add(base64.b64encode(text.encode()).decode())
                else:
                    with contextlib.suppress(binascii.Error, UnicodeDecodeError):
                        found.add(base64.b64decode(text, validate=True).decode("utf-8"))
    return sorted((v for v in found if len(v) >= 4), key=len, reverse=True)


def scrub(findings: list[Finding], secrets: list[str]) -> list[Finding]:
    """Findings with any Secret value in their message replaced by ``***`` (a rule or schema message
    quoting a value must not print it: masking covers every output, not only the objects)."""
    out = []
    for f in findings:
        message = f.message
        for value in secrets:
            message = message.replace(value, "***")
        out.append(f._replace(message=message))
    return out
