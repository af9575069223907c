"""Issue 24 item 2: what the platform facts share across the clusters of a fleet gives each the answer it
computes alone."""

from __future__ import annotations

import inspect
import re

from renderer.platform_chart import shipped_versions
from renderer.platform_chart.model import chart_model
from renderer.resolve import platform
from renderer.resolve.platform import PlatformFacts


def test_every_package_with_modelled_component_values_is_listed() -> None:
    """``_platform_values`` answers at once for Packages outside ``_COMPONENT_VALUES_OF``: the list must
    name every Package one of its branches handles."""
    source = inspect.getsource(PlatformFacts._platform_values)
    branches = {text or getattr(platform, constant)  # a branch names a Package or a renderer.model constant
                for text, constant in re.findall(r'name == (?:"([^"]+)"|([A-Z_]+)\b)', source)}
    assert branches and branches == set(platform._COMPONENT_VALUES_OF)


def test_chart_answers_shared_across_facts_are_the_models() -> None:
    catalogue = {"platform": {"variants": {}, "chartDefaults": {}}, "packages": {}}
    for version in shipped_versions():
        model = chart_model(version)
        for _ in range(2):  # the second round is served from the memo
            facts = PlatformFacts(catalogue, "isp-full", {}, version=version)
            for bundle in platform.BUNDLES:
                assert facts.optional_packages(bundle) == model.optional_packages(bundle)
                assert facts.default_packages(bundle) == model.default_packages(bundle)
                facts.optional_packages(bundle).append("changed by a caller")  # a copy: the memo is untouched
            for path in ["networking.stageCniPlugins", "gateway.http2", "publishing.host", "nothing.at.all"]:
                assert facts.reads(path) == model.reads(path)
