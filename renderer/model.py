"""The names cozy-render and Cozystack agree on, and ``Emitted``: one object a stage produced, with
where its parts came from. Shared by resolve, emit and check; imports no stage."""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

from typing import Any, NamedTuple

from renderer.errors import Location
from renderer.load.overlay import Overlay
from renderer.load.yamlio import Locations, Path_

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "cozy-render"
CLUSTER_LABEL = "render.cozystack.io/cluster"
PLATFORM_PACKAGE = "cozystack.cozystack-platform"
PACKAGE_API = "cozystack.io/v1alpha1"
# Every cozy-render JSON output but render's v1 List (renderer/data/output-schemas/, CHANGELOG.md).
JSON_API_VERSION = "cozy-render/v1"
GPU_OPERATOR = "cozystack.gpu-operator"  # the Package of every GPU route (reference (c))
GPU_OPERATOR_COMPONENT = "gpu-operator"  # its PackageSource's single component (sources/gpu-operator.yaml)
HAMI = "cozystack.hami"  # HAMi's device plugin, an optional iaas Package next to the operator
# The gpu.* knobs templates/bundles/iaas.yaml reads from platform values (reference (c), `gpu.*` table);
# the vGPU ones only matter on the vgpu route.
GPU_KNOBS = ("replaceDefaults", "permittedHostDevices", "mediatedDevicesConfiguration", "vgpuManager",
             "vgpuDeviceManager")
VGPU_ONLY_KNOBS = ("vgpuManager", "vgpuDeviceManager")
NAD_API = "k8s.cni.cncf.io/v1"  # NetworkAttachmentDefinition (multus)

# Objects that co-manage a Package the platform release renders (a "patch": Hubble's subtree of
# cozystack.networking, a `packages:` entry tuning cozystack.metallb) must never create it (PLT-11):
# a patch carries no spec.variant, so the operator resolves the Package it created to variant
# `default`, which e.g. cozystack.networking's PackageSource does not have; the Package then sits
# Ready=False VariantNotFound until the platform release adopts it (the bundled helm-controller
# v1.5.0 takes ownership of existing objects: install/upgrade.disableTakeOwnership default false).
# They are server-side applied after the platform Package (a later Argo CD sync wave; Flux users
# split them into a second Kustomization by the ownership annotation), and never pruned or deleted,
# which would delete the platform's object.
OWNERSHIP_ANNOTATION = "render.cozystack.io/ownership"  # patch | own: diff compares a patch on its own fields
ARGO_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
ARGO_SYNC_WAVE = "argocd.argoproj.io/sync-wave"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"
PATCH_ANNOTATIONS = {
    ARGO_SYNC_OPTIONS: "ServerSideApply=true,Prune=false,Delete=false",
    ARGO_SYNC_WAVE: "10",  # the platform Package has none (wave 0)
    FLUX_PRUNE: "disabled",
    OWNERSHIP_ANNOTATION: "patch",
}


class Derived(NamedTuple):
    """A part of an object a feature derived rather than copied from the overlay (``cozy-render explain
    --rendered`` reads these; nothing in render does).

    ``prefix`` is the path inside the object; ``route`` the overlay key whose value chose the route
    (``gpu.variant``); ``variant_file`` the variant data file (relative to ``variants/``) the part
    was copied from, with ``variant_path`` the ``(document index, *path)`` of ``prefix`` in it.
    Positions in variant files are looked up only when explain needs them; ``copied_from`` names the
    overlay key a forwarded part was copied from.
    """

    prefix: Path_
    feature: str
    route: Path_ | None
    variant_file: str | None = None
    variant_path: Path_ = ()
    note: str = ""
    copied_from: Path_ | None = None  # the overlay path the part was copied from (a forwarded key)


class Emitted:
    """One rendered object and where its parts came from in the overlay.

    ``origins`` maps a path prefix inside the object to a path prefix in the merged overlay, so a
    problem found at ``spec.components.x.enabled`` can be reported at the overlay line that set it.
    ``locs`` holds positions inside a manifest file the object was read from; ``derived`` the parts
    a feature derived (``Derived``).
    """

    def __init__(self, obj: dict[str, Any], source: Location | None,
                 origins: list[tuple[Path_, Path_]] | None = None, role: str = "manifest",
                 locs: Locations | None = None, derived: list[Derived] | None = None) -> None:
        self.obj = obj
        self.source = source
        self.origins = origins or []
        self.role = role
        self.locs = locs
        self.derived = derived or []

    def __repr__(self) -> str:
        return f"Emitted({self.ref()}, role={self.role})"

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name", ""))

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", ""))

    def key(self) -> tuple[str, str, str, str]:
        group = self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""
        return (group, self.kind, self.namespace, self.name)

    def ref(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"

    def locate(self, obj_path: Path_, overlay: Overlay) -> Location | None:
        if self.locs is not None:
            path = tuple(obj_path)
            while path not in self.locs and path:
                path = path[:-1]
            return self.locs.get(path, self.source)
        best: tuple[int, Path_] | None = None
        for prefix, overlay_prefix in self.origins:
            n = len(prefix)
            if tuple(obj_path[:n]) == tuple(prefix) and (best is None or n > best[0]):
                best = (n, tuple(overlay_prefix) + tuple(obj_path[n:]))
        if best is not None:
            loc = overlay.locate(best[1])
            if loc is not None:
                return loc
        return self.source

    def is_package(self, name: str | None = None) -> bool:
        return self.api_version == PACKAGE_API and self.kind == "Package" and (name is None or self.name == name)
