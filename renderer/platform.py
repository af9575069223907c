"""What the platform chart will do with the values we render: the effective values and bundle facts.

Effective values = chart defaults, then the platform variant's values file, then the rendered
Package values (Helm semantics: maps merge, lists replace, null deletes). Features and rules ask
these questions instead of re-reading raw overlay keys.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from renderer.model import PLATFORM_PACKAGE

ISP_FULL_VARIANTS = ("isp-full", "isp-full-generic")
# system.yaml networking variant per bundles.system.variant (reference (b)).
NETWORKING_VARIANT = {"isp-full": "kubeovn-cilium", "isp-full-generic": "kubeovn-cilium-generic",
                      "isp-hosted": "noop"}


def helm_merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = helm_merge(out.get(k), v)
        return out
    return over


class PlatformFacts:
    def __init__(self, catalogue: dict[str, Any], variant: str | None, values: dict[str, Any] | None) -> None:
        self.catalogue = catalogue
        self.variant = variant or "default"
        self.values = values or {}

    @classmethod
    def from_objects(cls, catalogue: dict[str, Any], objects: list[Any]) -> "PlatformFacts":
        for e in objects:
            if e.is_package(PLATFORM_PACKAGE):
                spec = e.obj.get("spec") or {}
                values = ((spec.get("components") or {}).get("platform") or {}).get("values")
                return cls(catalogue, spec.get("variant"), values if isinstance(values, dict) else {})
        return cls(catalogue, None, {})

    @property
    def known_variant(self) -> bool:
        return self.variant in self.catalogue["platform"]["variants"]

    @cached_property
    def effective(self) -> dict[str, Any]:
        platform = self.catalogue["platform"]
        variant_values = platform["variantValues"].get(self.variant, {})
        return helm_merge(helm_merge(platform["chartDefaults"], variant_values), self.values)

    def get(self, *path: str, default: Any = None) -> Any:
        node: Any = self.effective
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node

    @property
    def system_enabled(self) -> bool:
        return self.get("bundles", "system", "enabled") is True

    @property
    def system_variant(self) -> str:
        return str(self.get("bundles", "system", "variant", default=""))

    @property
    def system_renders(self) -> bool:
        return self.system_enabled

    @property
    def iaas_renders(self) -> bool:
        """iaas.yaml renders (and its guards run) only when iaas is on; it fails unless system is on too."""
        return self.get("bundles", "iaas", "enabled") is True

    @property
    def iaas_valid(self) -> bool:
        return self.iaas_renders and self.system_enabled and self.system_variant in ISP_FULL_VARIANTS

    def _list(self, key: str) -> list[str]:
        value = self.get("bundles", key, default=[])
        return [str(v) for v in value] if isinstance(value, list) else []

    @property
    def enabled_packages(self) -> list[str]:
        return self._list("enabledPackages")

    @property
    def disabled_packages(self) -> list[str]:
        return self._list("disabledPackages")

    def is_disabled(self, name: str) -> bool:
        return name in self.disabled_packages

    def optional_enabled(self, name: str) -> bool:
        """An optional package renders: in enabledPackages and not in disabledPackages (disabled wins)."""
        return name in self.enabled_packages and name not in self.disabled_packages

    @property
    def networking_variant(self) -> str | None:
        """Variant of the cozystack.networking Package the platform renders, or None when it renders none."""
        if not self.system_enabled or self.is_disabled("cozystack.networking"):
            return None
        return NETWORKING_VARIANT.get(self.system_variant)

    @property
    def multus_rendered(self) -> bool:
        return self.system_enabled and self.system_variant in ISP_FULL_VARIANTS and \
            not self.is_disabled("cozystack.multus")

    @property
    def gpu_operator_bundle_enabled(self) -> bool:
        return self.iaas_valid and self.optional_enabled("cozystack.gpu-operator")

    @property
    def gpu_operator_variant(self) -> str:
        value = self.get("bundles", "iaas", "gpuOperatorVariant")
        return "default" if value in (None, "") else str(value)
