"""load -> merge -> resolve variants -> emit -> check. Returns results; never prints or exits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from renderer.errors import ERROR, Finding, Location, RenderError, fail
from renderer.model import (
    CLUSTER_LABEL,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    PACKAGE_API,
    PATCH_ANNOTATIONS,
    PLATFORM_PACKAGE,
    Emitted,
    RenderContext,
    RenderResult,
)
from renderer.overlay import Overlay, confine, load_overlay
from renderer.tree import copy_tree, helm_merge
from renderer.variants import Variants
from renderer.yamlio import display_path, list_items, load_documents, read_text

# Output order (documented in the README): Namespaces, CRDs, the platform Package, other Packages,
# then everything else; ties broken by API group, kind, namespace, name.
_RANK_NAMESPACE, _RANK_CRD, _RANK_PLATFORM, _RANK_PACKAGE, _RANK_OTHER = range(5)


def render(path: Path, *, variants: Path | None = None, root: Path | None = None,
           run_checks: bool = True, extra_vars: dict[str, str] | None = None,
           kubernetes_version: str | None = None, validator: str = "auto") -> RenderResult:
    """Render one cluster. Raises RenderError on bad input or when an error-severity rule fires.

    ``extra_vars`` (Argo CD parameters) override the overlay's ``vars`` before templating.
    """
    overlay = load_overlay(path, root, extra_vars=extra_vars)
    result = emit(overlay, Variants(variants))
    if run_checks:  # output schemas (renderer.schemas): kubeconform-compatible, offline
        from renderer.schemas import check_objects
        result.findings.extend(check_objects(result, kubernetes_version=kubernetes_version, validator=validator))
    if run_checks:
        from renderer.rules import run_rules

        result.findings.extend(run_rules(result))
        errors = [f for f in result.findings if f.severity == ERROR]
        if errors:
            raise RenderError(sorted_findings(result.findings))
    result.findings[:] = sorted_findings(result.findings)
    return result


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Stable order by location; one report per problem.

    A rule and the output schema can both catch one mistake (``spec.values`` is PKG-05 and an
    additional property of the CRD): the rule's message says what to do, so a SCHEMA finding on a
    line a rule already reported is dropped.
    """
    def key(f: Finding) -> tuple[Any, ...]:
        loc = f.location or Location("")
        return (loc.path, loc.line, loc.col, f.code, f.message)

    unique = {(f.code, f.message, f.location, f.severity): f for f in findings}
    ruled = {(f.location.path, f.location.line) for f in unique.values()
             if f.location and f.code != SCHEMA_CODE and f.severity == ERROR}
    kept = [f for f in unique.values()
            if not (f.code == SCHEMA_CODE and f.location and (f.location.path, f.location.line) in ruled)]
    return sorted(kept, key=key)


SCHEMA_CODE = "SCHEMA"


def emit(overlay: Overlay, variants: Variants) -> RenderResult:
    values = copy_tree(overlay.get("platform", "values") or {})
    ctx = RenderContext(overlay, variants, values)
    from renderer.features import FEATURES

    for feature in FEATURES:
        feature(ctx)
    _emit_packages(ctx)
    _emit_manifests(ctx)
    _emit_platform(ctx)
    _label(ctx)
    _refuse_duplicates(ctx)
    ctx.objects.sort(key=_order)
    result = RenderResult(overlay, ctx.objects, ctx.findings, variants)
    result.inputs = ctx.inputs
    return result


def _emit_platform(ctx: RenderContext) -> None:
    overlay = ctx.overlay
    values = ctx.platform_values
    bundles = values.get("bundles") if isinstance(values.get("bundles"), dict) else None
    for key, extra in (("enabledPackages", ctx.enabled_packages), ("disabledPackages", ctx.disabled_packages)):
        user = (bundles or {}).get(key)
        names = list(user) if isinstance(user, list) else []
        if not extra and not isinstance(user, list):
            continue
        if not isinstance(user, list) and user is not None:
            continue  # not a list: leave it for the rules to report, do not guess
        merged = sorted(set(names) | set(extra), key=str)
        if merged:
            bundles = values.setdefault("bundles", {}) if bundles is None else bundles
            bundles[key] = merged
        elif bundles is not None:
            bundles.pop(key, None)
    if bundles is not None and not bundles:
        values.pop("bundles", None)

    spec: dict[str, Any] = {"variant": overlay.get("platform", "variant")}
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
    ], role="platform")


_PACKAGE_ENVELOPE = ("apiVersion", "kind", "metadata")


def _emit_packages(ctx: RenderContext) -> None:
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


def _emit_manifests(ctx: RenderContext) -> None:
    overlay = ctx.overlay
    for i, entry in enumerate(overlay.get("manifests") or []):
        where = overlay.locate(("manifests", i))
        if isinstance(entry, dict):
            _check_object(entry, where)
            ctx.add(copy_tree(entry), where, [((), ("manifests", i))], role="manifest")
            continue
        declared_in = Path(where.path).resolve().parent if where else overlay.cluster_file.parent
        file = confine(entry, declared_in, overlay.root, where, "manifests entry")
        ctx.inputs.append(file)
        display = display_path(file)
        for data, locs in load_documents(read_text(file, display), display, yaml11=True):
            items = data.get("items") if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") \
                and isinstance(data.get("items"), list) else None
            docs = list_items(items, locs) if items is not None else [(data, locs)]  # linear (issue 12)
            for obj, obj_locs in docs:
                _check_object(obj, obj_locs.get(()) or Location(display, 1, 1))
                ctx.add(obj, obj_locs.get(()), [], role="manifest").locs = obj_locs


def _check_object(obj: Any, where: Location | None) -> None:
    if not isinstance(obj, dict):
        raise fail("OVL-MANIFEST", "a manifest must be a Kubernetes object (a mapping)", where)
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj.get(key):
            raise fail("OVL-MANIFEST", f"manifest has no {key}", where)
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta.get("name"):
        raise fail("OVL-MANIFEST", f"{obj['kind']} has no metadata.name", where)


def _label(ctx: RenderContext) -> None:
    # Packages the platform release renders (Hubble patches, co-managed `packages:` entries) belong
    # to Helm, which stamps app.kubernetes.io/managed-by: Helm on everything it renders and checks
    # that label before adopting an object; claiming it would flip it on every sync. The same goes
    # for one we took over by disabling it (Hubble "own"): Helm created it, and it must still pass
    # Helm's ownership check if the platform renders it again. They carry only our cluster label.
    helm_owned = _platform_rendered(ctx, honour_disabled=True)
    helm_created = _platform_rendered(ctx, honour_disabled=False)
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


def _platform_rendered(ctx: RenderContext, honour_disabled: bool) -> set[str]:
    """Child Packages the platform release renders (or would, were none of them disabled)."""
    if not any(e.is_package() and e.name != PLATFORM_PACKAGE for e in ctx.objects):
        return set()
    facts = ctx.platform_facts()
    if not honour_disabled and facts.disabled_packages:
        from renderer.platform import PlatformFacts

        bundles = {k: v for k, v in (ctx.platform_values.get("bundles") or {}).items() if k != "disabledPackages"}
        facts = PlatformFacts(facts.catalogue, facts.variant, {**ctx.platform_values, "bundles": bundles})
    return set(facts.rendered_packages) - {PLATFORM_PACKAGE}


_METADATA_ORDER = ("name", "namespace", "labels", "annotations")


def _ordered_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    head = {k: meta[k] for k in _METADATA_ORDER if k in meta}
    return {**head, **{k: v for k, v in meta.items() if k not in head}}


def _refuse_duplicates(ctx: RenderContext) -> None:
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
