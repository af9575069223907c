"""Doctor's output: per cluster a summary line, then one line per finding (code, node, object,
message), as text or JSON. Findings are the command's result, so they go to stdout; a cluster that
could not be read is reported on stderr, as diff does."""

from __future__ import annotations

from typing import Any, NamedTuple, TextIO

from renderer.doctor import gpus
from renderer.doctor.checks import Diagnosis, allocatable, gpu_nodes, node_of, pod_healthy
from renderer.doctor.live import LiveState
from renderer.doctor.route import NAMESPACE, Route
from renderer.errors import ERROR, WARNING, Finding
from renderer.escape import cut, json_text, printable
from renderer.model import JSON_API_VERSION


class Outcome(NamedTuple):
    cluster: str
    route: Route
    diagnoses: list[Diagnosis]
    gpu_nodes: list[tuple[str, dict[str, str]]]  # (node, its nvidia.com/ allocatable)
    pods: int
    pods_ready: int
    verify: str | None  # the verification Job's state, when rendered
    source: dict[str, str] | None = None  # {"context", "server"}: what was read (no userinfo, no query)
    node_gpus: dict[str, dict[str, Any]] | None = None  # node -> the GPUs it offers (renderer.doctor.gpus)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnoses if d.severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnoses if d.severity == WARNING)


def _smi_by_node(route: Route, state: LiveState) -> dict[str, dict[str, Any]]:
    """What the completed verification Job's nvidia-smi printed, by the node its pod ran on."""
    if route.verify_job is None:
        return {}
    name = route.verify_job[1]
    found: dict[str, dict[str, Any]] = {}
    for pod in state.verify_pods:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        node = node_of(pod)
        if labels.get("job-name") != name or node is None or (pod.get("status") or {}).get("phase") != "Succeeded":
            continue
        parsed = gpus.parse_nvidia_smi(state.log(pod, "cuda"))
        if parsed:
            found[node] = parsed
    return found


def outcome(cluster: str, route: Route, state: LiveState, diagnoses: list[Diagnosis],
            source: dict[str, str] | None = None) -> Outcome:
    nodes = [(str(n["metadata"]["name"]), {k: v for k, v in allocatable(n).items() if k.startswith("nvidia.com/")})
             for n in gpu_nodes(state)]
    smi = _smi_by_node(route, state)
    offered = {str(n["metadata"]["name"]): gpus.node_gpus(n, smi.get(str(n["metadata"]["name"])))
               for n in gpu_nodes(state)}
    operator_pods = [p for p in state.pods if (p.get("metadata") or {}).get("namespace", NAMESPACE) == NAMESPACE]
    verify = None
    if route.verify_job is not None:
        codes = {d.code for d in diagnoses}
        verify = "failed" if "DOC-VERIFY" in codes else "pending" if "DOC-VERIFY-PENDING" in codes else "succeeded"
    return Outcome(cluster, route, diagnoses, nodes, len(operator_pods),
                   sum(1 for p in operator_pods if pod_healthy(p)), verify, source,
                   {n: info for n, info in offered.items() if info})


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
    read = f"; read from {_read_from(o.source)}" if o.source else ""
    return f"{o.cluster}: route {o.route.describe()}: {state}; {', '.join(parts)}{read}"


def _read_from(source: dict[str, str]) -> str:
    context = source.get("context")
    return f"{'context ' + context if context else 'the in-cluster service account'} at {source.get('server')}"


def write_text(outcomes: list[Outcome], out: TextIO) -> None:
    # printable throughout: node, pod and event text come from the live cluster
    for o in outcomes:
        out.write(printable(summary(o)) + "\n")
        for node, info in sorted((o.node_gpus or {}).items()):
            out.write(f"  node {printable(node)}: {printable(gpus.describe(info))}\n")
        for d in o.diagnoses:
            where = " ".join(x for x in (f"node {d.node}" if d.node else "", d.obj or "") if x)
            out.write(f"  {d.severity}[{d.code}] {printable(where)}: {printable(d.message)}\n")
            for note in d.notes:
                out.write(f"    note: {printable(note)}\n")
        if o.diagnoses:
            codes = " ".join(dict.fromkeys(d.code for d in o.diagnoses))
            out.write(f"  the documented fix: cozy-render rules CODE ({codes})\n")


API_VERSION, KIND = JSON_API_VERSION, "DoctorReport"  # renderer/data/output-schemas/doctor.schema.json


def as_json(outcomes: list[Outcome], failures: list[tuple[str, Finding]]) -> str:
    def cluster(o: Outcome) -> dict[str, Any]:
        r = o.route
        return {"cluster": o.cluster, "healthy": o.errors == 0, "source": o.source,
                "route": {"name": r.name, "variant": r.variant, "origin": r.origin, "packages": list(r.packages)},
                "summary": {"errors": o.errors, "warnings": o.warnings,
                            "gpuNodes": [{"name": n, "allocatable": a, "gpus": (o.node_gpus or {}).get(n) or {}}
                                         for n, a in o.gpu_nodes],
                            "pods": o.pods, "podsReady": o.pods_ready, "verification": o.verify},
                "findings": [{"cluster": o.cluster, "code": d.code, "severity": d.severity, "node": d.node,
                              "object": d.obj, "message": cut(d.message), "notes": [cut(n) for n in d.notes]}
                             for d in o.diagnoses]}

    doc = {"apiVersion": API_VERSION, "kind": KIND, "clusters": [cluster(o) for o in outcomes],
           "errors": [{"cluster": name, **f.as_dict()} for name, f in failures]}

    return json_text(doc, indent=2, sort_keys=False) + "\n"
