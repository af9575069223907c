"""The GPUs each node offers (issue 32 item 6): from GPU feature discovery's node labels and, when the
verification Job completed, from the ``nvidia-smi`` output it logged.

GPU feature discovery (NVIDIA/k8s-device-plugin ``gpu-feature-discovery``) labels every GPU node with
``nvidia.com/gpu.product``, ``nvidia.com/gpu.count``, ``nvidia.com/gpu.memory`` (MiB), the driver as
``nvidia.com/cuda.driver.major/minor/rev`` (``cuda.driver-version.*`` in newer releases), the CUDA
version the driver supports as ``nvidia.com/cuda.runtime.major/minor`` (``cuda.runtime-version.*``),
and ``nvidia.com/mig.strategy`` / ``nvidia.com/mig.config`` / ``nvidia.com/mig.capable``.

``nvidia-smi`` prints a table (what the Job runs), or a list (``-L``), or CSV
(``--query-gpu=... --format=csv``): all three are read; tests/doctor/data/h200/ holds real output.
"""

from __future__ import annotations

import re
from typing import Any

Obj = dict[str, Any]
PREFIX = "nvidia.com/"
SMI_LINES = 400  # a table for a few dozen GPUs; anything longer is not nvidia-smi output


def _label(labels: dict[str, str], *names: str) -> str | None:
    for name in names:
        value = labels.get(PREFIX + name)
        if isinstance(value, str) and value:
            return value
    return None


def _version(labels: dict[str, str], *stems: str) -> str | None:
    for stem in stems:
        parts = [labels.get(f"{PREFIX}{stem}.{p}") for p in ("major", "minor", "rev")]
        if parts[0]:
            return ".".join(p for p in parts if p)
    return None


def from_labels(labels: dict[str, str]) -> Obj:
    """What GPU feature discovery says of a node; only the keys it labelled."""
    found: Obj = {}
    product = _label(labels, "gpu.product")
    if product:
        found["product"] = product
    count = _label(labels, "gpu.count")
    if count and count.isdigit():
        found["count"] = int(count)
    memory = _label(labels, "gpu.memory")
    if memory and memory.isdigit():
        found["memoryMiB"] = int(memory)
    driver = _version(labels, "cuda.driver-version", "cuda.driver")
    if driver:
        found["driver"] = driver
    cuda = _version(labels, "cuda.runtime-version", "cuda.runtime")
    if cuda:
        found["cuda"] = cuda
    mig = {k: v for k, v in (("strategy", _label(labels, "mig.strategy")), ("config", _label(labels, "mig.config")),
                             ("capable", _label(labels, "mig.capable"))) if v}
    if mig:
        found["mig"] = mig
    return found


_TABLE_HEAD = re.compile(r"Driver Version:\s*([0-9.]+)(?:\s+CUDA Version:\s*([0-9.]+))?")
_TABLE_GPU = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|")
_TABLE_MEMORY = re.compile(r"(\d+)MiB\s*/\s*(\d+)MiB")
_TABLE_MIG = re.compile(r"\|\s+(Enabled|Disabled|N/A)\s+\|\s*$")
_LIST_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: [^)]*\)")


def parse_nvidia_smi(text: str) -> Obj:
    """GPUs (index, name, memoryMiB, mig), driver and CUDA version from ``nvidia-smi`` output, as far
    as it says them; {} when it is not nvidia-smi output."""
    lines = text.splitlines()[:SMI_LINES]
    found: Obj = {}
    gpus: list[Obj] = []
    for line in lines:
        head = _TABLE_HEAD.search(line)
        if head:
            found["driver"] = head.group(1)
            if head.group(2):
                found["cuda"] = head.group(2)
            continue
        row = _TABLE_GPU.match(line)
        if row:
            gpus.append({"index": int(row.group(1)), "name": row.group(2).strip()})
            continue
        listed = _LIST_GPU.match(line)
        if listed:
            gpus.append({"index": int(listed.group(1)), "name": listed.group(2).strip()})
            continue
        if gpus and "memoryMiB" not in gpus[-1]:
            memory = _TABLE_MEMORY.search(line)
            if memory:
                gpus[-1]["memoryMiB"] = int(memory.group(2))
                continue
        if gpus and "memoryMiB" in gpus[-1] and "mig" not in gpus[-1]:
            mig = _TABLE_MIG.search(line)
            if mig and line.startswith("|") and line.count("|") == 4 and not line.strip("| ").startswith("N/A "):
                gpus[-1]["mig"] = mig.group(1).lower()
    if not gpus:
        gpus = _csv(lines, found)
    if gpus:
        found["gpus"] = gpus
    return found


def _csv(lines: list[str], found: Obj) -> list[Obj]:
    """``--query-gpu=name,memory.total,driver_version,mig.mode.current --format=csv`` (any order)."""
    if not lines or "," not in lines[0]:
        return []
    header = [h.strip().split(" [", 1)[0] for h in lines[0].split(",")]
    if "name" not in header:
        return []
    gpus = []
    for index, line in enumerate(row for row in lines[1:] if row.strip()):
        cells = dict(zip(header, (c.strip() for c in line.split(",")), strict=False))
        gpu: Obj = {"index": index, "name": cells.get("name", "")}
        memory = re.match(r"(\d+)", cells.get("memory.total", ""))
        if memory:
            gpu["memoryMiB"] = int(memory.group(1))
        if cells.get("mig.mode.current") not in (None, "", "[N/A]"):
            gpu["mig"] = cells["mig.mode.current"].lower()
        if cells.get("driver_version"):
            found["driver"] = cells["driver_version"]
        gpus.append(gpu)
    return gpus


def describe(info: Obj) -> str:
    """One line for the text report: "1x NVIDIA H200 (143771 MiB), driver 580.159.04, CUDA 13.0, MIG disabled"."""
    parts = []
    gpus = info.get("gpus") or []
    product = info.get("product") or (gpus[0]["name"] if gpus else None)
    count = info.get("count") or (len(gpus) if gpus else None)
    memory = info.get("memoryMiB") or (gpus[0].get("memoryMiB") if gpus else None)
    if product:
        parts.append(f"{count or '?'}x {product}" + (f" ({memory} MiB)" if memory else ""))
    if info.get("driver"):
        parts.append(f"driver {info['driver']}")
    if info.get("cuda"):
        parts.append(f"CUDA {info['cuda']}")
    mig = info.get("mig") or {}
    modes = sorted({g["mig"] for g in gpus if g.get("mig")})
    if mig.get("strategy") or mig.get("config") or modes:
        said = [f"strategy {mig['strategy']}" if mig.get("strategy") else "", f"config {mig['config']}"
                if mig.get("config") else "", "/".join(modes)]
        parts.append("MIG " + ", ".join(s for s in said if s))
    if info.get("source"):
        parts.append(f"from {info['source']}")
    return ", ".join(parts)


def node_gpus(node: Obj, smi: Obj | None) -> Obj:
    """The node's GPUs: the labels, then what nvidia-smi printed on it (it saw the GPUs itself)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    info = from_labels(labels)
    sources = ["GPU feature discovery labels"] if info else []
    if smi:
        for key in ("driver", "cuda", "gpus"):
            if key in smi:
                info[key] = smi[key]
        sources.append("the verification Job's nvidia-smi")
    if info:
        info["source"] = " and ".join(sources)
    return info
