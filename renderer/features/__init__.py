"""Feature modules turn overlay keys (gpu, hubble, vlans) into platform values and objects.

Each is a function ``contribute(ctx: RenderContext) -> None`` run in this order before the
``packages:`` entries, extra manifests and the platform Package are emitted, so features can add
names to ``bundles.enabledPackages``/``disabledPackages`` and users can merge over what they render.
"""

from __future__ import annotations

from collections.abc import Callable

from renderer.features import gpu, hubble, vlans
from renderer.model import RenderContext

FEATURES: list[Callable[[RenderContext], None]] = [gpu.contribute, hubble.contribute, vlans.contribute]
