"""PKG-*: rules on the Package API itself (reference section (g), "Package / PackageSource API")."""

from __future__ import annotations

from typing import Iterator

from renderer.errors import ERROR
from renderer.rules import Hit, RuleContext, rule

_SOURCE_TYPES = "C:api/v1alpha1/package_types.go (scope=Cluster)"


@rule(
    "PKG-01", ERROR,
    "Package is cluster-scoped: remove metadata.namespace",
    """
    Package (packages.cozystack.io) is a cluster-scoped resource. A namespace on it is dropped by the
    API server, so the stored object never matches what Git holds and a GitOps diff never converges.
    Several Cozystack docs pages show `namespace: cozy-system` on a Package; that is a docs error.
    """,
    [_SOURCE_TYPES, "C:internal/crdinstall/manifests/cozystack.io_packages.yaml"],
)
def pkg_01(ctx: RuleContext) -> Iterator[Hit]:
    for e in ctx.packages():
        if (e.obj.get("metadata") or {}).get("namespace"):
            yield Hit(
                "Package is cluster-scoped: remove metadata.namespace (the API server drops it, "
                "and a GitOps diff will never converge).",
                e, ("metadata", "namespace"),
            )
