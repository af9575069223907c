"""The emit stage: a resolved ``Plan`` becomes the cluster's objects, labelled and in output order.

Emit writes the ``packages:`` entries (merged over Packages a feature rendered), the extra
``manifests:``, and the platform Package from the plan's final platform values, then labels every
object and refuses duplicates. It reads the platform facts from the plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location, RenderError, fail
from renderer.load.overlay import confine, displayed
from renderer.load.yamlio import Path_, list_items, load_documents, read_text
from renderer.model import (
    CLUSTER_LABEL,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    PACKAGE_API,
    PATCH_ANNOTATIONS,
    PLATFORM_PACKAGE,
    Derived,
    Emitted,
)
from renderer.resolve import Plan
from renderer.tree import copy_tree, helm_merge

# Output order (documented in the README): Namespaces, CRDs, the platform Package, other Packages,
# then everything else; ties broken by API group, kind, namespace, name.
_RANK_NAMESPACE, _RANK_CRD, _RANK_PLATFORM, _RANK_PACKAGE, _RANK_OTHER = range(5)


class RenderResult:
    """The emitted objects of one cluster, in output order, with the plan behind them."""

    def __init__(self, plan: Plan, objects: list[Emitted], findings: list[Finding], inputs: list[Path]) -> None:
        self.plan = plan
        self.overlay = plan.overlay
        self.variants = plan.variants  # shipped variant data plus --variants
        self.objects = objects
        self.findings = findings
        self.inputs = inputs  # every repository file the render read

    @property
    def manifests(self) -> list[dict[str, Any]]:
        return [e.obj for e in self.objects]


class _Emitting:
    """The objects of one cluster while emit writes them."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.overlay = plan.overlay
        # The plan stays as resolve left it: emit merges `packages:` entries into copies.
        self.objects = [Emitted(copy_tree(e.obj), e.source, list(e.origins), e.role, e.locs, list(e.derived))
                        for e in plan.objects]
        self.inputs = list(plan.inputs)

    def add(self, obj: dict[str, Any], source: Location | None, origins: list[tuple[Path_, Path_]] | None = None,
            role: str = "manifest") -> Emitted:
        emitted = Emitted(obj, source, origins or [], role)
        self.objects.append(emitted)
        if self._packages is not None and emitted.is_package():
            self._packages.setdefault(emitted.name, emitted)
        return emitted

    _packages: dict[str, Emitted] | None = None

    def package(self, name: str) -> Emitted | None:
        """The first Package named ``name``: an index kept as objects are added (a scan of every emitted
        object per ``packages:`` entry was quadratic: 20k entries took minutes, issue 25 item 3)."""
        if self._packages is None:
            self._packages = {}
            for e in self.objects:
                if e.is_package():
                    self._packages.setdefault(e.name, e)
        return self._packages.get(name)


def emit(plan: Plan) -> RenderResult:
    ctx = _Emitting(plan)
    _emit_packages(ctx)
    _emit_manifests(ctx)
    _emit_platform(ctx)
    _label(ctx)
    _refuse_duplicates(ctx)
    ctx.objects.sort(key=_order)
    return RenderResult(plan, ctx.objects, list(plan.findings), ctx.inputs)


def _emit_platform(ctx: _Emitting) -> None:
    overlay = ctx.overlay
    values = copy_tree(ctx.plan.platform_values)
    spec: dict[str, Any] = {"variant": ctx.plan.platform_variant}
    if values:
        spec["components"] = {"platform": {"values": values}}
    obj = {
        "apiVersion": PACKAGE_API,
        "kind": "Package",
        "metadata": {"name": PLATFORM_PACKAGE},
        "spec": spec,
    }
    ctx.add(obj, overlay.locate(("platform",)), [
        (("spec", "variant"), ("platform", "variant")),
        (("spec", "components", "platform", "values"), ("platform", "values")),
        (("spec",), ("platform",)),
    ], role="platform").derived = [d._replace(prefix=PLATFORM_VALUES + d.prefix) for d in ctx.plan.derived]


PLATFORM_VALUES = ("spec", "components", "platform", "values")


_PACKAGE_ENVELOPE = ("apiVersion", "kind", "metadata")


def _emit_packages(ctx: _Emitting) -> None:
    packages = ctx.overlay.get("packages") or {}
    for name, entry in packages.items():
        base = ("packages", name)
        where = ctx.overlay.locate(base)
        if name == PLATFORM_PACKAGE:
            raise fail("OVL-PACKAGE", f"{PLATFORM_PACKAGE} is rendered from platform:, not packages:", where)
        spec = {k: copy_tree(v) for k, v in entry.items() if k not in _PACKAGE_ENVELOPE}
        metadata = copy_tree(entry.get("metadata") or {})
        if not isinstance(metadata, dict):
            raise fail("OVL-PACKAGE", f"packages.{name}.metadata must be a mapping", where)
        for key, want in (("apiVersion", PACKAGE_API), ("kind", "Package")):
            if key in entry and entry[key] != want:
                raise fail("OVL-PACKAGE", f"packages.{name}.{key} must be {want!r}, got {entry[key]!r}",
                           ctx.overlay.locate(base + (key,)))
        if "name" in metadata and metadata["name"] != name:
            raise fail("OVL-PACKAGE", f"packages.{name}.metadata.name must be {name!r} (the key names the Package)",
                       ctx.overlay.locate(base + ("metadata", "name")))
        if isinstance(spec.get("spec"), dict):
            # the full object form: packages.<name>: {apiVersion, kind, metadata, spec}
            spec = {**spec.pop("spec"), **spec}
            spec_origin: tuple[Any, ...] = base + ("spec",)
        else:
            spec_origin = base
        metadata["name"] = name
        existing = ctx.package(name)
        origins = [(("spec",), spec_origin), (("metadata",), base + ("metadata",))]
        if existing is not None:
            # A feature rendered this Package; the user's entry is merged over it (Helm semantics).
            existing.obj["spec"] = helm_merge(existing.obj.get("spec") or {}, spec)
            existing.obj["metadata"] = helm_merge(existing.obj.get("metadata") or {}, metadata)
            existing.origins = origins + existing.origins
            continue
        obj = {"apiVersion": PACKAGE_API, "kind": "Package", "metadata": metadata, "spec": spec}
        ctx.add(obj, where, origins, role="package")


def _emit_manifests(ctx: _Emitting) -> None:
    overlay = ctx.overlay
    layers: dict[str, Path] = {}
    for p in overlay.layers:
        layers.setdefault(displayed(p), p)  # once, not per entry (issue 25 item 3)
    for i, entry in enumerate(overlay.get("manifests") or []):
        where = overlay.locate(("manifests", i))
        if isinstance(entry, dict):
            if str(entry.get("kind", "")).endswith("List") and isinstance(entry.get("items"), list):
                # An inline List is unpacked exactly as one read from a file (README: "a List is unpacked").
                for j, item in enumerate(entry["items"]):
                    at = ("manifests", i, "items", j)
                    _check_object(item, overlay.locate(at))
                    ctx.add(copy_tree(item), overlay.locate(at), [((), at)], role="manifest")
                continue
            _check_object(entry, where)
            ctx.add(copy_tree(entry), where, [((), ("manifests", i))], role="manifest")
            continue
        # where.path is a display string (relative to the cwd or, in cmp generate, to the repository root)
        layer = layers.get(where.path, overlay.cluster_file) if where else overlay.cluster_file
        declared_in = layer.parent
        file = confine(entry, declared_in, overlay.root, where, "manifests entry", resolved=overlay.resolved)
        ctx.inputs.append(file)
        display = displayed(file)
        for data, locs in load_documents(read_text(file, display), display, yaml11=True):
            items = data.get("items") if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") \
                and isinstance(data.get("items"), list) else None
            docs = list_items(items, locs) if items is not None else [(data, locs)]  # linear (issue 12)
            for obj, obj_locs in docs:
                _check_object(obj, obj_locs.get(()) or Location(display, 1, 1))
                added = ctx.add(obj, obj_locs.get(()), [], role="manifest")
                added.locs = obj_locs
                added.derived = [Derived((), "manifests", ("manifests", i), note="a manifests: file")]


def _check_object(obj: Any, where: Location | None) -> None:
    if not isinstance(obj, dict):
        raise fail("OVL-MANIFEST", "a manifest must be a Kubernetes object (a mapping)", where)
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj.get(key):
            raise fail("OVL-MANIFEST", f"manifest has no {key}", where)
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta.get("name"):
        raise fail("OVL-MANIFEST", f"{obj['kind']} has no metadata.name", where)


def _label(ctx: _Emitting) -> None:
    # Packages the platform release renders (Hubble patches, co-managed `packages:` entries) belong
    # to Helm, which stamps app.kubernetes.io/managed-by: Helm on everything it renders and checks
    # that label before adopting an object; claiming it would flip it on every sync. The same goes
    # for one we took over by disabling it (Hubble "own"): Helm created it, and it must still pass
    # Helm's ownership check if the platform renders it again. They carry only our cluster label.
    facts = ctx.plan.facts
    helm_owned = set(facts.rendered_packages) - {PLATFORM_PACKAGE}
    helm_created = set(facts.rendered_if_none_disabled) - {PLATFORM_PACKAGE}
    for e in ctx.objects:
        meta = e.obj.setdefault("metadata", {})
        if e.role == "package" and e.is_package() and e.name in helm_owned:
            # A `packages:` entry tuning a platform-rendered Package is a patch like Hubble's (PLT-11):
            # applied after the platform, server-side, never pruned. Annotations the user set win.
            annotations = meta.get("annotations")
            if annotations is None or isinstance(annotations, dict):
                meta["annotations"] = {**PATCH_ANNOTATIONS, **(annotations or {})}
        labels = meta.get("labels")
        if labels is None:
            labels = {}
        elif not isinstance(labels, dict):
            raise fail("OVL-MANIFEST", f"{e.ref()}: metadata.labels must be a mapping", e.source)
        if not (e.is_package() and e.name in helm_created):
            labels[MANAGED_BY_LABEL] = MANAGED_BY
        labels[CLUSTER_LABEL] = ctx.overlay.name
        # Re-insert so metadata reads name, namespace, labels, annotations in a fixed order.
        meta["labels"] = dict(sorted(labels.items()))
        e.obj["metadata"] = _ordered_metadata(meta)


_METADATA_ORDER = ("name", "namespace", "labels", "annotations")


def _ordered_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    head = {k: meta[k] for k in _METADATA_ORDER if k in meta}
    return {**head, **{k: v for k, v in meta.items() if k not in head}}


def _refuse_duplicates(ctx: _Emitting) -> None:
    seen: dict[tuple[str, str, str, str], Emitted] = {}
    findings = []
    for e in ctx.objects:
        first = seen.setdefault(e.key(), e)
        if first is not e:
            findings.append(Finding("OVL-DUPLICATE", f"{e.ref()} is rendered twice (first from {first.source})",
                                    e.source))
    if findings:
        raise RenderError(findings)


def _order(e: Emitted) -> tuple[Any, ...]:
    if e.kind == "Namespace" and e.api_version == "v1":
        rank = _RANK_NAMESPACE
    elif e.kind == "CustomResourceDefinition":
        rank = _RANK_CRD
    elif e.is_package(PLATFORM_PACKAGE):
        rank = _RANK_PLATFORM
    elif e.is_package():
        rank = _RANK_PACKAGE
    else:
        rank = _RANK_OTHER
    return (rank, *e.key())
