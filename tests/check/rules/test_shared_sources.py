"""Issue 24 item 2: the catalogue's PackageSources are read once per catalogue and shared by the renders
of a fleet; a PackageSource object in one render overrides its own copy only."""

from __future__ import annotations

from renderer.check.rules import common


def _catalogue(depends: list[str]) -> dict:
    return {"packages": {"cozystack.a": {"variants": {"default": {"dependsOn": depends, "components": {
        "a": {"install": {"releaseName": "a"}}, "b": {}}}}}, "cozystack.b": {"partial": True}}}


def test_catalogue_sources_are_read_once_per_catalogue_and_equal_a_fresh_read() -> None:
    first, second = _catalogue(["cozystack.b"]), _catalogue(["cozystack.c"])
    shared = common._catalogue_sources(first)
    assert common._catalogue_sources(first) is shared
    fresh = common._read_catalogue_sources(first)
    assert {k: (v.variants, v.partial_variants, v.partial_components) for k, v in shared.items()} == \
        {k: (v.variants, v.partial_variants, v.partial_components) for k, v in fresh.items()}
    other = common._catalogue_sources(second)  # another catalogue (another chart version): its own answer
    assert other["cozystack.a"].variants["default"].depends_on == ["cozystack.c"]
    assert shared["cozystack.a"].variants["default"].depends_on == ["cozystack.b"]
    assert shared["cozystack.a"].variants["default"].components == {"a": True, "b": False}
    assert shared["cozystack.b"].partial_variants and shared["cozystack.b"].partial_components


class _Emitted:
    api_version, kind, name = "cozystack.io/v1alpha1", "PackageSource", "cozystack.a"

    def __init__(self) -> None:
        self.obj = {"spec": {"variants": [{"name": "default", "dependsOn": ["cozystack.z"], "components": []}]}}


class _Facts:
    def __init__(self, catalogue: dict) -> None:
        self.catalogue = catalogue


class _Context:
    def __init__(self, catalogue: dict, objects: list) -> None:
        self.facts = _Facts(catalogue)
        self.objects = objects


def test_a_package_source_in_one_render_overrides_only_that_render() -> None:
    catalogue = _catalogue(["cozystack.b"])
    mine = common._sources(_Context(catalogue, [_Emitted()]))  # type: ignore[arg-type]
    assert mine["cozystack.a"].variants["default"].depends_on == ["cozystack.z"]
    theirs = common._sources(_Context(catalogue, []))  # type: ignore[arg-type]
    assert theirs["cozystack.a"].variants["default"].depends_on == ["cozystack.b"]
