"""Offline output-schema validation, compatible with kubeconform (finding ID ``SCHEMA``).

Every emitted object whose (apiVersion, kind) we ship a schema for is validated before output:

- Package, PackageSource and NetworkAttachmentDefinition against their CRDs (``data/crds/``),
  converted the way kubeconform's ``openapi2jsonschema.py`` does (``convert.py`` lists the rules);
- core kinds (``catalog.CORE_KINDS``) against schemas from the kubernetes-validate wheel, one bundle
  per Kubernetes minor (``data/core/``), default ``catalog.DEFAULT_KUBERNETES_VERSION``.

Kinds without a schema (a user's own CRDs in ``manifests:``) are skipped without a finding, like
``kubeconform -ignore-missing-schemas``: kubeconform's default, an error, would fail every render
that carries a custom resource we cannot know.

Importing this package is cheap; the validators load on first use, one module per kind present.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from renderer.emit import RenderResult
    from renderer.errors import Finding

CODE = "SCHEMA"
VALIDATORS = ("auto", "builtin", "kubeconform")


def check_objects(result: RenderResult, *, kubernetes_version: str | None = None,
                  validator: str = "auto") -> list[Finding]:
    """ERROR findings ``SCHEMA``: ``<Kind> <ns/name>: <JSON pointer>: <message>``, located in the overlay.

    ``validator``: ``builtin``; ``kubeconform`` (the binary on PATH, fed our schemas); ``auto``
    (kubeconform when it is on PATH, else builtin). Raises RenderError for an unbundled Kubernetes
    version or a kubeconform that cannot be run.
    """
    from renderer.check.schemas import catalog
    from renderer.errors import Finding, RenderError

    if validator not in VALIDATORS:
        raise ValueError(f"validator must be one of {', '.join(VALIDATORS)}, not {validator!r}")
    try:
        version = catalog.normalize_kubernetes_version(kubernetes_version)
    except ValueError as exc:
        raise RenderError([Finding(CODE, str(exc))]) from None
    objects = result.objects
    if validator == "auto":
        from renderer.executables import on_path

        validator = "kubeconform" if on_path("kubeconform") else "builtin"
    if validator == "kubeconform":
        from renderer.check.schemas.kubeconform import KubeconformFailed, run

        try:
            errors = run([e.obj for e in objects], version)
        except KubeconformFailed as exc:
            raise RenderError([Finding(CODE, f"{exc}; --validator builtin validates without it")]) from None
    else:
        from renderer.check.schemas.validator import BuiltinValidator

        builtin = BuiltinValidator(version)
        errors = [(i, err) for i, e in enumerate(objects) for err in builtin.errors(e.obj)]
    return [
        Finding(CODE, f"{objects[i].ref()}: {err.pointer}: {err.message}",
                objects[i].locate(err.focus, result.overlay))
        for i, err in errors
    ]
