"""The Package health check (docs/argocd/install/argocd-cm-health.yaml) run in a real Lua 5.1 interpreter on
the status shapes the Cozystack operator writes, for every Ready reason of both vendored operator versions.

Argo CD runs health scripts in gopher-lua, a Lua 5.1 implementation, with the live object as global ``obj``
(gitops-engine pkg/health, argo-cd util/lua). Here the interpreter is lupa's bundled Lua 5.1 (the test extra
installs it) or Debian's ``lua5.1``; the test is skipped, saying so, only when neither exists.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO

HEALTH = REPO / "docs" / "argocd" / "install" / "argocd-cm-health.yaml"
HEALTH_KEY = "resource.customizations.health.cozystack.io_Package"
REASONS = Path(__file__).parent / "data" / "package_ready_reasons.yaml"
WARNINGS_ANNOTATION = "render.cozystack.io/warnings"


def lua_literal(value: Any) -> str:
    """A Lua table constructor for JSON-shaped data, as gopher-lua sees a decoded object (null is nil)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "".join(["\"", "".join(f"\\{ord(ch):03d}" if ch in "\"\\\n\r" or ord(ch) < 32 else ch
                                      for ch in value), "\""])
    if isinstance(value, list):
        return "{" + ", ".join(lua_literal(v) for v in value) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"[{lua_literal(k)}] = {lua_literal(v)}" for k, v in value.items()
                               if v is not None) + "}"
    raise TypeError(type(value))


def _lupa_runner() -> Callable[[str, dict[str, Any]], dict[str, str]] | None:
    try:
        from lupa import lua51  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None

    def run(script: str, obj: dict[str, Any]) -> dict[str, str]:
        runtime = lua51.LuaRuntime(unpack_returned_tuples=False)
        assert runtime.eval("_VERSION") == "Lua 5.1"
        hs = runtime.execute(f"obj = {lua_literal(obj)}\n{script}")
        return {"status": hs["status"], "message": hs["message"]}
    return run


def _binary_runner() -> Callable[[str, dict[str, Any]], dict[str, str]] | None:
    binary = shutil.which("lua5.1")
    if binary is None:
        return None

    def run(script: str, obj: dict[str, Any]) -> dict[str, str]:
        chunk = (f"obj = {lua_literal(obj)}\nlocal hs = (function()\n{script}\nend)()\n"
                 "io.write(hs.status, \"\\n\", hs.message)")
        proc = subprocess.run([binary, "-"], input=chunk, capture_output=True, text=True, timeout=30, check=True)
        status, message = proc.stdout.split("\n", 1)
        return {"status": status, "message": message}
    return run


RUNNERS = {name: runner for name, runner in (("lupa", _lupa_runner()), ("lua5.1", _binary_runner())) if runner}


@pytest.fixture(params=sorted(RUNNERS) or ["none"])
def health(request: pytest.FixtureRequest) -> Callable[[dict[str, Any]], dict[str, str]]:
    if request.param == "none":
        pytest.skip("no Lua 5.1 interpreter: install the test extra (lupa) or Debian's lua5.1")
    script = YAML(typ="safe").load(HEALTH.read_text())["data"][HEALTH_KEY]
    runner = RUNNERS[request.param]
    return lambda obj: runner(script, obj)


def package(conditions: list[dict[str, Any]] | None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A live Package as the API server returns it (cozystack api/v1alpha1/package_types.go)."""
    obj: dict[str, Any] = {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                           "metadata": {"name": "cozystack.gpu-operator", "uid": "6c1f", "generation": 1},
                           "spec": {"variant": "default"}}
    if annotations:
        obj["metadata"]["annotations"] = annotations
    if conditions is not None:
        obj["status"] = {"conditions": conditions, "dependencies": {"cozystack.cozystack-platform": {"ready": False}}}
    return obj


def ready(status: str, reason: str, message: str) -> dict[str, Any]:
    """A metav1.Condition as meta.SetStatusCondition writes it (observedGeneration is omitted when 0)."""
    return {"type": "Ready", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-11-30T10:00:00Z"}


def reasons() -> list[dict[str, str]]:
    data = YAML(typ="safe").load(REASONS.read_text())
    assert data["versions"] == ["v1.6.2", "main-3c780ac"]
    vendored = sorted(p.name for p in (REPO / "renderer" / "platform_chart" / "charts").iterdir() if p.is_dir())
    assert sorted(data["versions"]) == vendored  # one list per vendored chart's operator
    return list(data["reasons"])


@pytest.mark.parametrize("case", reasons(), ids=lambda c: c["reason"])
def test_every_operator_reason_maps_to_its_health(health, case: dict[str, str]) -> None:
    got = health(package([ready(case["status"], case["reason"], case["message"])]))
    assert got["status"] == case["health"], case["why"]
    assert got["message"].startswith(f"{case['reason']}: {case['message']}")  # the reason is always shown


def test_only_the_self_resolving_reasons_wait(health) -> None:
    """Issue 20 item 1: before the platform release exists, a wave-0 Package must not fail the sync."""
    waiting = {c["reason"] for c in reasons() if c["health"] == "Progressing"}
    assert waiting == {"PackageSourceNotFound", "DependenciesNotReady"}


@pytest.mark.parametrize("conditions", [None, [], [{"type": "Reconciling", "status": "True", "reason": "X",
                                                    "message": "m"}]], ids=["no-status", "no-conditions", "no-ready"])
def test_a_package_without_ready_is_progressing(health, conditions) -> None:
    assert health(package(conditions))["status"] == "Progressing"


def test_ready_unknown_is_progressing(health) -> None:
    assert health(package([ready("Unknown", "Reconciling", "in progress")]))["status"] == "Progressing"


def test_an_unknown_false_reason_is_degraded(health) -> None:
    """A reason a future operator adds is not hidden behind Progressing."""
    got = health(package([ready("False", "SomethingNew", "boom")]))
    assert got == {"status": "Degraded", "message": "SomethingNew: boom"}


def test_the_last_ready_condition_counts_and_others_are_ignored(health) -> None:
    conditions = [{"type": "Other", "status": "False", "reason": "VariantNotFound", "message": "x"},
                  ready("True", "ReconciliationSucceeded", "ok")]
    assert health(package(conditions))["status"] == "Healthy"


def test_render_warnings_show_in_the_message_without_changing_health(health) -> None:
    warnings = "PLT-11 overlays/clusters/gpu-apt-01/cluster.yaml:20:3"
    got = health(package([ready("True", "ReconciliationSucceeded", "ok")], {WARNINGS_ANNOTATION: warnings}))
    assert got == {"status": "Healthy", "message": f"ReconciliationSucceeded: ok; cozy-render warnings: {warnings}"}


def test_messages_with_quotes_and_newlines_reach_the_script_intact(health) -> None:
    message = 'Failed to create HelmRelease "x":\nwebhook \\ denied'
    got = health(package([ready("False", "HelmReleaseFailed", message)]))
    assert got == {"status": "Degraded", "message": f"HelmReleaseFailed: {message}"}


def test_the_walkthrough_matches_the_check(health) -> None:
    """README "First sync": every row of its table is what the Lua says for that condition."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("### First sync", 1)[1].split("\n### ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines()
            if line.startswith("| `") and "Ready=" in line]
    assert len(rows) >= 4, section
    seen = set()
    for cells in rows:
        condition, expected = cells[0].strip(), cells[1].strip()
        status, _, reason = condition.strip("`").removeprefix("Ready=").partition(" ")
        got = health(package([ready(status, reason, "m")]))
        assert got["status"] == expected.strip("*"), cells
        seen.add(reason)
    assert {"PackageSourceNotFound", "DependenciesNotReady", "ReconciliationSucceeded"} <= seen


def test_lua_literal_round_trips_through_json() -> None:
    """The converter itself: what the script sees is the JSON the API server sent."""
    if "lupa" not in RUNNERS:
        pytest.skip("lupa is not installed")
    from lupa import lua51  # type: ignore[import-not-found,unused-ignore]

    runtime = lua51.LuaRuntime()
    value = {"a": ["x", 'q"\\\n', 1, True], "b": {"c": "d"}}
    table = runtime.eval(lua_literal(value))
    assert json.dumps([table["a"][i] for i in range(1, 5)]) == json.dumps(value["a"])
    assert table["b"]["c"] == "d"
