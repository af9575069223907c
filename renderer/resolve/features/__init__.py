"""Feature modules turn overlay keys (gpu, hubble, vlans) into platform values and objects.

Each is a function ``contribute(ctx: FeatureContext) -> None``, run by the resolve stage
(``renderer.resolve``) in this order, before emit writes the ``packages:`` entries, extra manifests
and the platform Package, so features can add names to ``bundles.enabledPackages``/``disabledPackages``
and users can merge over what they render. A new feature is a module here with a ``contribute``
function, added to ``FEATURES``.
"""

from __future__ import annotations

from collections.abc import Callable

from renderer.resolve.features import gpu, hubble, vlans
from renderer.resolve.features.context import FeatureContext

FEATURES: list[Callable[[FeatureContext], None]] = [gpu.contribute, hubble.contribute, vlans.contribute]
