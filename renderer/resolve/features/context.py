"""What a feature reads and contributes while the resolve stage runs (``renderer.resolve``).

A feature reads the merged overlay, the variant data and the *requested* platform facts (what the
platform chart does with the platform values as the overlay wrote them), and contributes platform
values, Packages to enable or disable in the platform, standalone objects and findings. It never
sees another stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location
from renderer.load.overlay import Overlay
from renderer.load.variants import Variants
from renderer.load.yamlio import Path_
from renderer.model import Derived, Emitted
from renderer.resolve.platform import PlatformFacts


class FeatureContext:
    def __init__(self, overlay: Overlay, variants: Variants, platform_values: dict[str, Any],
                 requested: PlatformFacts) -> None:
        self.overlay = overlay
        self.variants = variants  # shipped variant data plus --variants
        self.platform_values = platform_values  # features write into these
        self.requested = requested  # facts of the platform values as the overlay wrote them
        self.enabled_packages: dict[str, Location | None] = {}
        self.disabled_packages: dict[str, Location | None] = {}
        self.objects: list[Emitted] = []
        self.findings: list[Finding] = []
        self.inputs: list[Path] = list(overlay.layers)  # every file the render read (render cache)
        self.derived: list[Derived] = []  # platform values a feature set (prefix: a path in the values)
        self.gpu_route = "none"  # passthrough | vgpu | container | talos-native | none (the GPU feature)

    def add(self, obj: dict[str, Any], source: Location | None, origins: list[tuple[Path_, Path_]] | None = None,
            role: str = "manifest", derived: list[Derived] | None = None) -> Emitted:
        emitted = Emitted(obj, source, origins or [], role, derived=derived)
        self.objects.append(emitted)
        return emitted

    def derive(self, values_path: Path_, feature: str, route: Path_ | None, note: str = "") -> None:
        """Record that ``feature`` set platform value ``values_path`` because of overlay key ``route``."""
        self.derived.append(Derived(tuple(values_path), feature, route, note=note))

    def enable(self, name: str, why: Location | None) -> None:
        self.enabled_packages.setdefault(name, why)

    def disable(self, name: str, why: Location | None) -> None:
        self.disabled_packages.setdefault(name, why)
