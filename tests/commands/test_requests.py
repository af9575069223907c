"""Requests (renderer/requests.py) hold every command default once; the render cache key covers them all."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

from renderer import requests
from renderer.requests import CmpGenerateRequest, RenderRequest, cache_fields

# A value unlike the default, per field type, to prove every field reaches the key.
_OTHER: dict[str, Any] = {"path": Path("elsewhere"), "fmt": "json", "out": Path("out"), "all_clusters": True,
                          "check_only": True, "variants": Path("v"), "root": Path("r"), "strict": True,
                          "kubernetes_version": "1.30", "validator": "builtin", "parameters": "[]",
                          "source_path": "clusters/x", "plugin_env": (("ARGOCD_ENV_strict", "true"),),
                          "kube_version": "1.33.4", "annotate": True, "verbose": True, "jobs": 2,
                          "shard": "1/2", "chart": "helm", "helm": "/usr/bin/helm"}


@pytest.mark.parametrize("request_type", [RenderRequest, CmpGenerateRequest], ids=lambda t: t.__name__)
def test_changing_any_field_changes_the_cache_key(request_type: type[NamedTuple]) -> None:
    base = request_type(Path("clusters/c1"))  # type: ignore[call-arg]  # every request takes a path first
    for field in request_type._fields:
        changed = base._replace(**{field: _OTHER[field]})
        assert cache_fields(changed) != cache_fields(base), field


def test_the_command_is_part_of_the_key() -> None:
    assert cache_fields(RenderRequest(Path("."))) != cache_fields(CmpGenerateRequest(Path(".")))


def test_the_fast_path_builds_the_requests_click_builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """entry.fast_path and the Click commands call the same bodies with equal requests."""
    import click

    from renderer import cli, entry
    from renderer.commands import cmp, render

    seen: list[NamedTuple] = []
    monkeypatch.setattr(render, "run", lambda req, cache_key=None: seen.append(req) or 0)
    monkeypatch.setattr(cmp, "generate", lambda req, cache_key=None: seen.append(req) or 0)
    monkeypatch.setenv("ARGOCD_APP_PARAMETERS", "null")
    monkeypatch.setenv("ARGOCD_APP_SOURCE_PATH", "clusters/c1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c1").mkdir()
    for argv in (["render", "c1"], ["cmp", "generate"]):
        body = entry.fast_path(argv)
        assert body is not None
        body()
        with pytest.raises(SystemExit):
            cli.main.main(argv, standalone_mode=True)
    fast_render, click_render, fast_cmp, click_cmp = seen
    assert fast_render == click_render == RenderRequest(Path("c1"))
    assert fast_cmp == click_cmp == CmpGenerateRequest(Path("."), "null", "clusters/c1")
    assert click is not None


def test_other_argument_vectors_go_through_click() -> None:
    from renderer import entry

    for argv in (["render", "--help"], ["render", "does-not-exist"], ["render", "x", "-o", "json"], ["check", "x"]):
        assert entry.fast_path(argv) is None, argv
    assert requests.RenderRequest._field_defaults["fmt"] == "yaml"
