"""What the pipeline passes between stages: emitted objects and the render context features use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location
from renderer.overlay import Overlay
from renderer.yamlio import Locations, Path_

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "cozy-render"
CLUSTER_LABEL = "render.cozystack.io/cluster"
PLATFORM_PACKAGE = "cozystack.cozystack-platform"
PACKAGE_API = "cozystack.io/v1alpha1"

# Objects that co-manage a Package the platform release renders (a "patch": Hubble's subtree of
# cozystack.networking, a `packages:` entry tuning cozystack.metallb) must never create it: Helm
# refuses to adopt an object it did not create and the whole platform release fails (PLT-11).
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


class Emitted:
    """One rendered object and where its parts came from in the overlay.

    ``origins`` maps a path prefix inside the object to a path prefix in the merged overlay, so a
    problem found at ``spec.components.x.enabled`` can be reported at the overlay line that set it.
    ``locs`` holds positions inside a manifest file the object was read from.
    """

    def __init__(self, obj: dict[str, Any], source: Location | None,
                 origins: list[tuple[Path_, Path_]] | None = None, role: str = "manifest",
                 locs: Locations | None = None) -> None:
        self.obj = obj
        self.source = source
        self.origins = origins or []
        self.role = role
        self.locs = locs

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


class RenderContext:
    """What feature modules read and extend while a cluster is emitted."""

    def __init__(self, overlay: Overlay, variants: Any, platform_values: dict[str, Any]) -> None:
        self.overlay = overlay
        self.variants = variants  # renderer.variants.Variants: shipped data plus --variants
        self.platform_values = platform_values
        self.enabled_packages: dict[str, Location | None] = {}
        self.disabled_packages: dict[str, Location | None] = {}
        self.objects: list[Emitted] = []
        self.findings: list[Finding] = []
        self.inputs: list[Path] = list(overlay.layers)  # every file the render read (render cache)

    def add(self, obj: dict[str, Any], source: Location | None, origins: list[tuple[Path_, Path_]] | None = None,
            role: str = "manifest") -> Emitted:
        emitted = Emitted(obj, source, origins or [], role)
        self.objects.append(emitted)
        return emitted

    def package(self, name: str) -> Emitted | None:
        for e in self.objects:
            if e.is_package(name):
                return e
        return None

    def platform_facts(self):
        """What the platform chart will do with the platform values as the features have left them."""
        from renderer.platform import PlatformFacts

        return PlatformFacts(self.variants.catalogue(), self.overlay.get("platform", "variant"),
                             self.platform_values)

    def enable(self, name: str, why: Location | None) -> None:
        self.enabled_packages.setdefault(name, why)

    def disable(self, name: str, why: Location | None) -> None:
        self.disabled_packages.setdefault(name, why)


class RenderResult:
    def __init__(self, overlay: Overlay, objects: list[Emitted], findings: list[Finding],
                 variants: Any = None) -> None:
        self.overlay = overlay
        self.objects = objects
        self.findings = findings
        self.variants = variants  # the renderer.variants.Variants the render used (shipped + --variants)
        self.inputs: list[Path] = []  # every repository file the render read

    @property
    def manifests(self) -> list[dict[str, Any]]:
        return [e.obj for e in self.objects]
