"""Doctor's output: per cluster a summary line, then one line per finding (code, node, object,
message), as text or JSON. Findings are the command's result, so they go to stdout; a cluster that
could not be read is reported on stderr, as diff does."""

from __future__ import annotations

from typing import Any, NamedTuple, TextIO

from renderer.doctor.checks import Diagnosis, allocatable, gpu_nodes, pod_healthy
from renderer.doctor.live import LiveState
from renderer.doctor.route import NAMESPACE, Route
from renderer.errors import ERROR, WARNING, Finding


class Outcome(NamedTuple):
    cluster: str
    route: Route
    diagnoses: list[Diagnosis]
    gpu_nodes: list[tuple[str, dict[str, str]]]  # (node, its nvidia.com/ allocatable)
    pods: int
    pods_ready: int
    verify: str | None  # the verification Job's state, when rendered

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnoses if d.severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnoses if d.severity == WARNING)


def outcome(cluster: str, route: Route, state: LiveState, diagnoses: list[Diagnosis]) -> Outcome:
    nodes = [(str(n["metadata"]["name"]), {k: v for k, v in allocatable(n).items() if k.startswith("nvidia.com/")})
             for n in gpu_nodes(state)]
    operator_pods = [p for p in state.pods if (p.get("metadata") or {}).get("namespace", NAMESPACE) == NAMESPACE]
    verify = None
    if route.verify_job is not None:
        codes = {d.code for d in diagnoses}
        verify = "failed" if "DOC-VERIFY" in codes else "pending" if "DOC-VERIFY-PENDING" in codes else "succeeded"
    return Outcome(cluster, route, diagnoses, nodes, len(operator_pods),
                   sum(1 for p in operator_pods if pod_healthy(p)), verify)


def summary(o: Outcome) -> str:
    state = "healthy" if o.errors == 0 else f"{o.errors} error{'s' * (o.errors != 1)}"
    if o.warnings:
        state += f", {o.warnings} warning{'s' * (o.warnings != 1)}"
    if o.route.name == "none":
        return f"{o.cluster}: route {o.route.describe()}: nothing to check"
    parts = [f"{len(o.gpu_nodes)} GPU node{'s' * (len(o.gpu_nodes) != 1)}",
             f"{o.pods_ready}/{o.pods} pods ready in {NAMESPACE}"]
    if o.verify is not None:
        parts.append(f"verification Job {o.verify}")
    return f"{o.cluster}: route {o.route.describe()}: {state}; {', '.join(parts)}"


def write_text(outcomes: list[Outcome], out: TextIO) -> None:
    from renderer.escape import printable  # node, pod and event text come from the live cluster

    for o in outcomes:
        out.write(printable(summary(o)) + "\n")
        for d in o.diagnoses:
            where = " ".join(x for x in (f"node {d.node}" if d.node else "", d.obj or "") if x)
            out.write(f"  {d.severity}[{d.code}] {printable(where)}: {printable(d.message)}\n")
            for note in d.notes:
                out.write(f"    note: {printable(note)}\n")
        if o.diagnoses:
            codes = " ".join(dict.fromkeys(d.code for d in o.diagnoses))
            out.write(f"  the documented fix: cozy-render rules CODE ({codes})\n")


def as_json(outcomes: list[Outcome], failures: list[Finding]) -> str:
    from renderer.escape import cut

    def cluster(o: Outcome) -> dict[str, Any]:
        r = o.route
        return {"cluster": o.cluster, "healthy": o.errors == 0,
                "route": {"name": r.name, "variant": r.variant, "origin": r.origin, "packages": list(r.packages)},
                "summary": {"errors": o.errors, "warnings": o.warnings,
                            "gpuNodes": [{"name": n, "allocatable": a} for n, a in o.gpu_nodes],
                            "pods": o.pods, "podsReady": o.pods_ready, "verification": o.verify},
                "findings": [{"cluster": o.cluster, "code": d.code, "severity": d.severity, "node": d.node,
                              "object": d.obj, "message": cut(d.message), "notes": [cut(n) for n in d.notes]}
                             for d in o.diagnoses]}

    doc = {"clusters": [cluster(o) for o in outcomes], "errors": [f.as_dict() for f in failures]}
    from renderer.escape import json_text

    return json_text(doc, indent=2, sort_keys=False) + "\n"
