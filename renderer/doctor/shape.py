"""The shape of every live field doctor reads, checked once where the object is read (issue 34 item
15): an API server (or a hostile one) can send a label that is a list, a restart count that is a
string, conditions that are a mapping. Each such field is removed from doctor's copy and named in one
``DOC-SHAPE`` finding per object, so the checks read only values of the type Kubernetes documents
and a malformed object can never end the run (exit 4) or be taken for a healthy one: a pod without a
readable status is not ready, a DaemonSet without readable counts has none ready.

A spec is a Python type (``str``, ``int``, ``bool``; ``int`` never accepts a bool), a dict of
field specs (the field must be a mapping; unlisted keys are left alone and never read), or
``("list", spec)`` / ``("map", spec)`` for a list of items and a mapping of string keys.
"""

from __future__ import annotations

from typing import Any

Spec = Any
QUANTITY = (str, int)  # allocatable values: "2", 2

_CONTAINER_STATUS = {"name": str, "ready": bool, "restartCount": int, "image": str,
                     "state": {"waiting": {"reason": str, "message": str},
                               "terminated": {"exitCode": int, "reason": str},
                               "running": {}}}
_CONDITIONS = ("list", {"type": str, "status": str, "reason": str, "message": str})
_METADATA = {"name": str, "namespace": str, "labels": ("map", str), "ownerReferences": ("list", {})}

SPECS: dict[str, dict[str, Spec]] = {
    "Node": {"metadata": _METADATA,
             "status": {"allocatable": ("map", QUANTITY), "runtimeHandlers": ("list", {"name": str})}},
    "Pod": {"metadata": _METADATA, "spec": {"nodeName": str},
            "status": {"phase": str, "initContainerStatuses": ("list", _CONTAINER_STATUS),
                       "containerStatuses": ("list", _CONTAINER_STATUS)}},
    "Package": {"metadata": _METADATA, "spec": {"variant": str},
                "status": {"conditions": _CONDITIONS, "dependencies": ("map", {"ready": bool})}},
    "Event": {"metadata": _METADATA, "involvedObject": {"name": str, "kind": str, "namespace": str},
              "reason": str, "message": str, "source": {"host": str}},
    "DaemonSet": {"metadata": _METADATA,
                  "status": {"desiredNumberScheduled": int, "numberReady": int, "currentNumberScheduled": int}},
    "Deployment": {"metadata": _METADATA, "spec": {"replicas": int}, "status": {"readyReplicas": int}},
    "ClusterPolicy": {"metadata": _METADATA, "status": {"state": str}},
    "Job": {"metadata": _METADATA, "status": {"conditions": _CONDITIONS}},
    "RuntimeClass": {"metadata": _METADATA, "handler": str},
}


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "a mapping", list: "a list", str: "a string", int: "an integer", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _wanted(spec: Spec) -> str:
    if isinstance(spec, dict):
        return "a mapping"
    if isinstance(spec, tuple) and spec[:1] == ("list",):
        return "a list"
    if isinstance(spec, tuple) and spec[:1] == ("map",):
        return "a mapping"
    if spec == QUANTITY:
        return "a quantity"
    return {str: "a string", int: "an integer", bool: "a boolean"}[spec]


def _fits(value: Any, spec: Spec) -> bool:
    if isinstance(spec, dict) or (isinstance(spec, tuple) and spec[:1] == ("map",)):
        return isinstance(value, dict)
    if isinstance(spec, tuple) and spec[:1] == ("list",):
        return isinstance(value, list)
    types = spec if isinstance(spec, tuple) else (spec,)
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def conform(obj: dict[str, Any], kind: str) -> list[str]:
    """Remove from ``obj`` (in place) every read field of the wrong type; the problems, as
    ``path is X, not Y`` phrases, in document order. Iterative: a deeply nested hostile body costs
    no stack."""
    problems: list[str] = []
    spec = SPECS.get(kind)
    if spec is None:
        return problems
    work: list[tuple[Any, Spec, str]] = [(obj, spec, "")]
    while work:
        node, node_spec, path = work.pop()
        if isinstance(node_spec, dict):
            for key in sorted(node_spec, reverse=True):  # popped in key order: messages stay sorted
                if key not in node or node[key] is None:
                    node.pop(key, None)
                    continue
                child, child_spec = node[key], node_spec[key]
                where = f"{path}.{key}" if path else key
                if not _fits(child, child_spec):
                    problems.append(f"{where} is {_type_name(child)}, not {_wanted(child_spec)}")
                    del node[key]
                elif not isinstance(child_spec, type) and child_spec != QUANTITY:
                    work.append((child, child_spec, where))
        elif node_spec[0] == "list":
            item_spec = node_spec[1]
            kept = []
            for i, item in enumerate(node):
                if _fits(item, item_spec):
                    kept.append(item)
                    if isinstance(item_spec, (dict, tuple)) and item_spec != QUANTITY:
                        work.append((item, item_spec, f"{path}[{i}]"))
                else:
                    problems.append(f"{path}[{i}] is {_type_name(item)}, not {_wanted(item_spec)}")
            node[:] = kept
        else:  # map
            item_spec = node_spec[1]
            for key in sorted(node, key=str, reverse=True):
                value = node[key]
                if not isinstance(key, str) or not _fits(value, item_spec):
                    problems.append(f"{path}.{key} is {_type_name(value)}, not {_wanted(item_spec)}")
                    del node[key]
                elif isinstance(item_spec, (dict, tuple)) and item_spec != QUANTITY:
                    work.append((value, item_spec, f"{path}.{key}"))
    return sorted(set(problems))
