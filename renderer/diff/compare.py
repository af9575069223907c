"""Comparing one cluster's render with its live objects: matching, ignores, masking, orphans, statuses.

The live side comes from ``renderer.diff.live`` already fetched; nothing here does I/O.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from renderer.check.rules import RuleContext
from renderer.check.rules.common import co_managed, hand_written, sources, written_variant
from renderer.diff.normalize import LAST_APPLIED, PACKAGE_API, Obj, drop_foreign, normalise, project
from renderer.errors import ERROR, WARNING, Finding, Location, RenderError
from renderer.model import CLUSTER_LABEL

OWNERSHIP_ANNOTATION = "render.cozystack.io/ownership"
KEEP_ANNOTATION = "helm.sh/resource-policy"
FLUX_RECONCILE = "kustomize.toolkit.fluxcd.io/reconcile"
FLUX_SSA = "kustomize.toolkit.fluxcd.io/ssa"

CREATE, CHANGE, UNCHANGED, ORPHANED, PATCH_TARGET_MISSING, SKIPPED = (
    "create", "change", "unchanged", "orphaned", "patch-target-missing", "skipped")
STATUS_TEXT = {CREATE: "to create", CHANGE: "to change", UNCHANGED: "unchanged", ORPHANED: "orphaned",
               PATCH_TARGET_MISSING: "patch target missing", SKIPPED: "skipped"}
# A patch whose live target is absent is a difference too (issue 18 item 3): syncing it would
# create a partial object, so it is never "no differences" (exit 1 at least; PLT-11 errors exit 3).
DIFFERENT = frozenset({CREATE, CHANGE, ORPHANED, PATCH_TARGET_MISSING})

Key = tuple[str, str, str, str]  # API group, kind, namespace, name


def key_of(obj: Obj) -> Key:
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    return (group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", "")))


def ref(key: Key) -> str:
    _, kind, ns, name = key
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _annotations(obj: Obj | None) -> dict[str, Any]:
    meta = (obj or {}).get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations if isinstance(annotations, dict) else {}


def _labels(obj: Obj | None) -> dict[str, Any]:
    meta = (obj or {}).get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


def is_patch(obj: Obj) -> bool:
    return _annotations(obj).get(OWNERSHIP_ANNOTATION) == "patch"


def is_package(obj: Obj) -> bool:
    return obj.get("apiVersion") == PACKAGE_API and obj.get("kind") == "Package"


# --- ignores ------------------------------------------------------------------------------------


class Ignore(NamedTuple):
    """``[KIND[/NAMESPACE]/NAME:]POINTER``; KIND alone, or ``*`` for NAME, widens the scope."""

    kind: str | None
    namespace: str | None
    name: str | None
    path: tuple[str, ...]
    text: str

    def matches(self, key: Key) -> bool:
        _, kind, ns, name = key
        return ((self.kind is None or self.kind == kind)
                and (self.namespace is None or self.namespace == ns)
                and (self.name in (None, "*") or self.name == name))


def parse_ignore(text: str, where: str, location: Location | None = None) -> Ignore:
    scope, sep, pointer = text.rpartition(":") if not text.startswith("/") else ("", "", text)
    if not sep:
        pointer = text
    if not pointer.startswith("/") or pointer == "/":
        raise RenderError([Finding("DIFF-IGNORE", f"{where}: {text!r} is not a JSON pointer such as /spec/replicas, "
                                   "optionally scoped as KIND/NAME:/spec/replicas", location)])
    path = tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/"))
    kind = namespace = name = None
    if scope:
        parts = scope.split("/")
        if len(parts) > 3 or not all(parts):
            raise RenderError([Finding("DIFF-IGNORE", f"{where}: scope {scope!r} must be KIND, KIND/NAME or "
                                       "KIND/NAMESPACE/NAME", location)])
        kind = parts[0]
        if len(parts) == 2:
            name = parts[1]
        elif len(parts) == 3:
            namespace, name = parts[1], parts[2]
    return Ignore(kind, namespace, name, path, text)


def _remove(node: Any, path: tuple[str, ...]) -> None:
    for part in path[:-1]:
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return
    leaf = path[-1]
    if isinstance(node, dict):
        node.pop(leaf, None)
    elif isinstance(node, list) and leaf.isdigit() and int(leaf) < len(node):
        del node[int(leaf)]


def apply_ignores(obj: Obj | None, key: Key, ignores: list[Ignore]) -> None:
    if obj is None:
        return
    for ignore in ignores:
        if ignore.matches(key):
            _remove(obj, ignore.path)


# --- masking ------------------------------------------------------------------------------------

MASK, MASK_BEFORE, MASK_AFTER = "***", "*** (before)", "*** (after)"


def _mask_map(live: Any, desired: Any) -> tuple[Any, Any]:
    if not isinstance(live, dict) and not isinstance(desired, dict):
        return live, desired
    live_map = live if isinstance(live, dict) else {}
    want_map = desired if isinstance(desired, dict) else {}
    live_out, want_out = {}, {}
    for k in live_map:
        live_out[k] = MASK if want_map.get(k, object()) == live_map[k] or k not in want_map else MASK_BEFORE
    for k in want_map:
        want_out[k] = MASK if live_map.get(k, object()) == want_map[k] or k not in live_map else MASK_AFTER
    return (live_out if isinstance(live, dict) else live), (want_out if isinstance(desired, dict) else desired)


def mask(live: Obj | None, desired: Obj | None) -> tuple[Obj | None, Obj | None]:
    """Copies with Secret ``data``/``stringData`` values and any last-applied annotation replaced by
    ``***``, or ``*** (before)`` / ``*** (after)`` where the two sides differ (kubectl's scheme), so a
    change stays visible without its value."""
    live = _shallow(live)
    desired = _shallow(desired)
    either = live or desired or {}
    if either.get("apiVersion") == "v1" and either.get("kind") == "Secret":
        for field in ("data", "stringData"):
            a, b = _mask_map((live or {}).get(field), (desired or {}).get(field))
            if live is not None and field in live:
                live[field] = a
            if desired is not None and field in desired:
                desired[field] = b
    la, lb = _annotations(live).get(LAST_APPLIED), _annotations(desired).get(LAST_APPLIED)
    if la is not None or lb is not None:
        same = la == lb
        for obj, value, changed in ((live, la, MASK_BEFORE), (desired, lb, MASK_AFTER)):
            if obj is not None and value is not None:
                obj["metadata"] = {**obj["metadata"],
                                   "annotations": {**_annotations(obj), LAST_APPLIED: MASK if same else changed}}
    return live, desired


def _shallow(obj: Obj | None) -> Obj | None:
    return dict(obj) if obj is not None else None


# --- one cluster ------------------------------------------------------------------------------


class Item(NamedTuple):
    """One object's outcome. ``live``/``desired`` are normalised and masked, ready to print."""

    key: Key
    api_version: str
    status: str
    live: Obj | None
    desired: Obj | None
    note: str = ""


class Outcome(NamedTuple):
    cluster: str
    items: list[Item]
    findings: list[Finding]
    source: str = ""  # what the live side was read from (the context line on stderr)

    def count(self, status: str) -> int:
        return sum(1 for i in self.items if i.status == status)

    @property
    def different(self) -> bool:
        return any(i.status in DIFFERENT for i in self.items)


class Desired(NamedTuple):
    obj: Obj  # as rendered
    compare_to: Obj  # what the live copy should equal: the render, or its server-side dry-run result


def compare_cluster(cluster: str, desired: list[Desired], live: dict[Key, Obj | None], labelled: list[Obj],
                    ignores: list[Ignore], *, show_secrets: bool = False, content_only: bool = False,
                    released: list[Obj] | None = None,
                    patch_notes: dict[str, tuple[str, str]] | None = None) -> Outcome:
    """``live`` maps each rendered object's key to its live copy (None: absent); ``labelled`` holds
    the live objects carrying this cluster's label (orphan candidates). ``content_only`` (``--against``)
    compares rendered output with rendered output: no patch projection, no live-only checks.
    ``released`` (``--effective``) holds live Packages the platform release installed that the
    effective set no longer has: orphans too, without our label. ``patch_notes`` words PLT-11 for a
    patch whose live Package is absent (``patch_target_notes``)."""
    items: list[Item] = []
    findings: list[Finding] = []
    rendered_keys = set()
    for d in desired:
        key = key_of(d.obj)
        rendered_keys.add(key)
        if not key[2]:  # applied without a namespace: it lands in the default namespace
            rendered_keys.add((key[0], key[1], "default", key[3]))
        current = live.get(key)
        items.append(_compare_one(key, d, current, ignores, show_secrets, content_only, findings, patch_notes or {}))
    platform_keys = {key_of(o) for o in released or []}
    for obj in sorted([*labelled, *(released or [])], key=key_of):
        key = key_of(obj)
        if key in rendered_keys or (_labels(obj).get(CLUSTER_LABEL) != cluster and key not in platform_keys):
            continue
        if (obj.get("metadata") or {}).get("ownerReferences"):
            continue  # made by a controller from something of ours (it copies our labels), not by us
        rendered_keys.add(key)
        note = "installed by the platform release, which no longer renders it" if key in platform_keys else ""
        if is_patch(obj):
            note = "a patch of a platform-owned object: remove our fields, never delete it"
        shown = normalise(obj)
        apply_ignores(shown, key, ignores)
        shown_live, _ = (shown, None) if show_secrets else mask(shown, None)
        items.append(Item(key, str(obj.get("apiVersion", "")), ORPHANED, shown_live, None, note))
        if is_package(obj) and _annotations(obj).get(KEEP_ANNOTATION) == "keep" and not is_patch(obj):
            findings.append(Finding("PLT-09", f"{key[3]} is no longer rendered but stays installed "
                                    "(resource-policy keep); delete the Package CR to uninstall.", None, WARNING))
    return Outcome(cluster, items, findings)


def skip_reason(*objs: Obj | None, live_exists: bool) -> str | None:
    for obj in objs:
        annotations = _annotations(obj)
        if str(annotations.get(FLUX_RECONCILE, "")).lower() == "disabled":
            return f"{FLUX_RECONCILE}: disabled"
        ssa = str(annotations.get(FLUX_SSA, "")).lower()
        if ssa == "ignore":
            return f"{FLUX_SSA}: Ignore"
        if ssa == "ifnotpresent" and live_exists:
            return f"{FLUX_SSA}: IfNotPresent, and it exists"
    return None


def _compare_one(key: Key, d: Desired, current: Obj | None, ignores: list[Ignore], show_secrets: bool,
                 content_only: bool, findings: list[Finding], patch_notes: dict[str, tuple[str, str]]) -> Item:
    api_version = str(d.obj.get("apiVersion", ""))
    patch = is_patch(d.obj) and not content_only
    reason = skip_reason(d.obj, current, live_exists=current is not None)
    if reason is not None:
        return Item(key, api_version, SKIPPED, None, None, reason)
    if current is None and patch:
        note = patch_notes.get(key[3])
        message, severity = note if note is not None else (
            f"{ref(key)}: the live object this patch is for does not exist. A patch has no spec.variant, so the "
            "operator would resolve it to `default`, which this Package's source may not have: the Package would "
            "sit VariantNotFound until the platform release adopts it. Sync the patch after the platform Package "
            "is Ready.", ERROR)
        findings.append(Finding("PLT-11", message, None, severity))
        return Item(key, api_version, PATCH_TARGET_MISSING, None, None, "the platform release has not created it")
    server_side = d.compare_to is not d.obj
    want = normalise(d.compare_to, defaults=not (patch and not server_side))
    if server_side:
        # The dry-run result is the live object with our apply merged in: it carries every other
        # manager's metadata (Argo CD's tracking id, Helm's labels, controller annotations). Both sides
        # lose the same server-owned and foreign fields, judged against what we render.
        drop_foreign(want, d.obj)
    have = normalise(current) if current is not None else None
    if have is not None:
        if patch and not server_side:
            have = project(have, want)
        else:
            drop_foreign(have, d.obj)
    apply_ignores(want, key, ignores)
    apply_ignores(have, key, ignores)
    if have is None:
        status = CREATE
    else:
        status = UNCHANGED if have == want else CHANGE
    if not show_secrets:
        have, want_shown = mask(have, want)
    else:
        want_shown = want
    return Item(key, api_version, status, have, want_shown, "patch: only the fields it carries" if patch else "")


def patch_target_notes(result: Any) -> dict[str, tuple[str, str]]:
    """PLT-11, worded per Package, for a patch whose live Package is absent (2026-12 erratum): syncing
    it creates the Package before the platform release does. Helm adopts it later (helm-controller
    v1.5.0 takes ownership); until then the operator installs what the patch says on its own. It has
    no ``spec.variant``, so it resolves to ``default``: an error when the PackageSource has no such
    variant (VariantNotFound) or the platform renders another one (the wrong one runs meanwhile), a
    warning when ``default`` is the platform's variant too (only the ordering matters)."""
    ctx = RuleContext(result)
    known = sources(ctx)
    notes: dict[str, tuple[str, str]] = {}
    for e in hand_written(ctx):
        rendered = co_managed(ctx, e)
        if rendered is None:
            continue
        variant = written_variant(e) or "default"
        source = known.get(e.name)
        prefix = f"Package {e.name}: the live object this patch is for does not exist; syncing it first creates it"
        suffix = ("until the platform release adopts it (helm-controller takes ownership of existing objects). "
                  "Sync it after the platform Package is Ready.")
        if source is not None and not source.partial_variants and variant not in source.variants:
            notes[e.name] = (f"{prefix} with variant {variant}, which PackageSource {e.name} does not have: it sits "
                             f"Ready=False VariantNotFound {suffix}", ERROR)
        elif variant != rendered.variant:
            notes[e.name] = (f"{prefix} with variant {variant}: the operator installs that instead of the "
                             f"platform's {rendered.variant} {suffix}", ERROR)
        else:
            notes[e.name] = (f"{prefix}; the operator installs variant {variant} on its own {suffix}", WARNING)
    return notes
