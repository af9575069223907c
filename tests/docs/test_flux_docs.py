"""docs/flux/: the healthCheckExprs example is valid YAML of the Kustomization shape and means what the
README says, evaluated with a real CEL implementation on the Package statuses the controller writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO

KUSTOMIZATIONS = REPO / "docs" / "flux" / "kustomizations.yaml"


def package_check() -> dict[str, str]:
    docs = [d for d in YAML(typ="safe").load_all(KUSTOMIZATIONS.read_text()) if d]
    patches = next(d for d in docs if d["spec"].get("dependsOn"))
    assert patches["spec"]["wait"] is True  # healthCheckExprs only matter where objects are health-checked
    (entry,) = patches["spec"]["healthCheckExprs"]
    assert set(entry) <= {"apiVersion", "kind", "current", "inProgress", "failed"} and entry["current"]
    assert (entry["apiVersion"].split("/")[0], entry["kind"]) == ("cozystack.io", "Package")
    assert all(isinstance(v, str) for v in entry.values())
    return entry


def health(entry: dict[str, str], obj: dict[str, Any]) -> str:
    """fluxcd/pkg runtime/cel StatusEvaluator.Evaluate: inProgress, failed, current in that order; none
    true is InProgress. The object's top-level fields are the CEL variables."""
    celpy = pytest.importorskip("celpy", reason="cel-python (test extra) is not installed")
    env = celpy.Environment()
    activation = {k: celpy.json_to_cel(v) for k, v in obj.items()}
    for key, verdict in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
        if key in entry:
            program = env.program(env.compile(entry[key]))
            result = program.evaluate(activation)
            assert not isinstance(result, celpy.CELEvalError), (key, result)
            if bool(result):
                return verdict
    return "InProgress"


def package(*conditions: dict[str, str], status: bool = True) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                           "metadata": {"name": "cozystack.networking", "generation": 1}}
    if status:
        obj["status"] = {"conditions": list(conditions)} if conditions else {}
    return obj


def ready(status: str, reason: str = "Reconciled") -> dict[str, str]:
    return {"type": "Ready", "status": status, "reason": reason, "message": "m"}


@pytest.mark.parametrize(("obj", "verdict"), [
    (package(ready("True")), "Current"),
    (package(ready("False", "DependenciesNotReady")), "InProgress"),
    (package(ready("Unknown", "DependenciesNotReady")), "InProgress"),
    (package(ready("False", "InstallFailed")), "Failed"),
    (package({"type": "Other", "status": "True", "reason": "x", "message": "m"}), "InProgress"),
    (package(), "InProgress"),  # status without conditions
], ids=["ready", "deps-not-ready", "deps-unknown", "failed", "no-ready-condition", "no-conditions"])
def test_package_health_expressions(obj: dict[str, Any], verdict: str) -> None:
    assert health(package_check(), obj) == verdict


def test_every_operator_reason_means_what_the_argo_cd_check_says() -> None:
    """The reasons of both vendored operator versions (tests/docs/data/package_ready_reasons.yaml, which
    test_argocd_health.py runs through the Lua): Progressing is InProgress, Degraded Failed, Healthy Current."""
    reasons = YAML(typ="safe").load((Path(__file__).parent / "data" / "package_ready_reasons.yaml").read_text())
    flux = {"Progressing": "InProgress", "Degraded": "Failed", "Healthy": "Current"}
    for case in reasons["reasons"]:
        obj = package({"type": "Ready", "status": case["status"], "reason": case["reason"], "message": case["message"]})
        assert health(package_check(), obj) == flux[case["health"]], case["reason"]
    assert health(package_check(), package(ready("False", "SomethingNew"))) == "Failed"
