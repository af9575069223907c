"""No overlay makes cozy-render crash: seeded mutations of the samples either render, or are refused
with findings (RenderError), never an internal error."""

from __future__ import annotations

import contextlib
import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from renderer.errors import RenderError
from tests.conftest import OVERLAYS
from tests.helpers import render

# Values and keys the schema accepts in free-form places (platform.values, packages:, manifests:) or
# that are plausible typos and wrong types elsewhere.
VALUES: list[Any] = [None, True, False, 0, -1, 5000, 1.5, "", "x", "yes", [], [1], ["a", "b"], {}, {"a": 1},
                     {"enabled": "yes"}, "{{ vars.domain }}", "cozystack.gpu-operator", "container", "vgpu",
                     "isp-hosted", "default", [{"name": 1}]]
KEYS = ["bundles", "enabledPackages", "disabledPackages", "iaas", "gpuOperatorVariant", "system", "enabled",
        "variant", "networking", "stageCniPlugins", "cilium", "hubble", "gpu", "vgpuManager", "imagePullSecrets",
        "publishing", "apiServerEndpoint", "monitoring", "rootEnabled", "components", "values", "metadata",
        "namespace", "spec", "permittedHostDevices", "pciHostDevices", "mediatedDevices", "replaceDefaults",
        "relay", "metrics", "type", "ipam"]


def mutate(node: Any, rng: random.Random) -> Any:
    """Free-form data turned odd: values replaced, keys dropped or added, at any depth."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            roll = rng.random()
            if roll < 0.15:
                out[key] = rng.choice(VALUES)
            elif roll >= 0.2:
                out[key] = mutate(value, rng)
        if rng.random() < 0.3:
            out[rng.choice(KEYS)] = rng.choice(VALUES) if rng.random() < 0.6 else {rng.choice(KEYS): rng.choice(VALUES)}
        return out
    if isinstance(node, list):
        return [mutate(v, rng) for v in node] + ([rng.choice(VALUES)] if rng.random() < 0.2 else [])
    return rng.choice(VALUES) if rng.random() < 0.2 else node


def pick(rng: random.Random, *choices: Any) -> Any:
    return rng.choice(choices)


def mutate_overlay(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Keep the overlay schema-valid (so the render gets past loading) and make everything the schema
    leaves open, and every enum and flag, take odd or conflicting values: the features and rules
    must cope with all of it."""
    doc = copy.deepcopy(doc)
    doc["host"] = {"os": pick(rng, "apt", "talos"), "nvidiaDriver": pick(rng, True, False),
                   "nvidiaContainerRuntime": pick(rng, True, False), "gpuModel": pick(rng, "A100", "L40S", "x"),
                   "nodes": pick(rng, [], [{"name": "n1", "labels": {"nvidia.com/gpu.workload.config": "vm-passthrough"}}])}
    platform = doc.setdefault("platform", {})
    platform["variant"] = pick(rng, "default", "isp-full", "isp-full-generic", "isp-hosted", "distro-full")
    platform["values"] = mutate(platform.get("values") or {"bundles": {"enabledPackages": []}}, rng)
    if rng.random() < 0.7:
        doc["gpu"] = {"variant": pick(rng, "none", "default", "vgpu", "container"), "hami": pick(rng, True, False)}
        for knob in ("permittedHostDevices", "mediatedDevicesConfiguration", "vgpuManager", "vgpuDeviceManager",
                     "values"):
            if rng.random() < 0.3:
                doc["gpu"][knob] = mutate({"pciHostDevices": [{"pciVendorSelector": "10DE:2236"}],
                                           "repository": "r", "enabled": True, "imagePullSecrets": ["s"]}, rng) \
                    if knob != "vgpuManager" else {"repository": pick(rng, "", "r"),
                                                   "imagePullSecrets": pick(rng, ["s"], [{"name": "s"}])}
                if knob == "vgpuDeviceManager":
                    doc["gpu"][knob] = {"enabled": pick(rng, True, False)}
                if knob == "permittedHostDevices":
                    doc["gpu"][knob] = {"pciHostDevices": mutate([{"pciVendorSelector": "10DE:2236"}], rng)}
    if rng.random() < 0.6:
        doc["hubble"] = {"enabled": pick(rng, True, False), "ownership": pick(rng, "patch", "own"),
                         "metrics": mutate({"enabled": ["dns"]}, rng), "values": mutate({"relay": {}}, rng)}
    if rng.random() < 0.6:
        doc["vlans"] = [{"name": pick(rng, "vlan100", "subnet-0123abcd"), "id": pick(rng, 0, 100, 5000),
                         "uplink": pick(rng, "eno2", "a-very-long-uplink-name"), "bridge": pick(rng, "br100", "br1"),
                         "namespaces": pick(rng, ["tenant-a"], ["tenant-a", "tenant-b"]),
                         "type": pick(rng, "bridge", "macvlan", "ipvlan", "host-device"),
                         "hostAddress": pick(rng, "203.0.113.2/24", "203.0.113.2"), "mtu": pick(rng, 1500, 9000),
                         "routes": pick(rng, [], [{"to": "0.0.0.0/0", "via": "203.0.113.1"}])}
                        for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.5:
        doc["packages"] = mutate({"cozystack.metallb": {"variant": "default", "components": {"metallb": {
            "values": {"a": 1}}}}, "cozystack.gpu-operator": {"variant": "container"},
            "cozystack.networking": {"variant": "kubeovn-cilium"}}, rng)
        doc["packages"] = {k: v for k, v in doc["packages"].items()
                           if isinstance(v, dict) and k.startswith("cozystack.") and "." not in k[10:]}
    if rng.random() < 0.3:
        doc["manifests"] = [mutate({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "VMInstance",
                                    "metadata": {"name": "vm1", "namespace": "tenant-a"},
                                    "spec": {"networks": [{"name": "vlan100"}], "gpus": [{"name": "x"}]}}, rng)]
    return doc


def samples() -> dict[str, Any]:
    load = YAML(typ="safe").load
    return {p.parent.name: load(p.read_text()) for p in sorted((OVERLAYS / "clusters").glob("*/cluster.yaml"))}


@pytest.mark.parametrize("seed", range(4))
def test_mutated_overlays_never_crash(seed: int, repo, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(seed)
    clusters = samples()
    base = YAML(typ="safe").load((OVERLAYS / "base" / "cluster.yaml").read_text())
    root: Path = repo({"extra/namespace.yaml": (OVERLAYS / "extra" / "namespace.yaml").read_text()})
    for _ in range(40):
        name, doc = rng.choice(sorted(clusters.items()))
        doc = mutate_overlay({**doc, "inherits": ["../../base/cluster.yaml"], "metadata": {"name": name}}, rng)
        folder = root / "clusters" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cluster.yaml").write_text(json.dumps(doc))
        (root / "base").mkdir(exist_ok=True)
        (root / "base" / "cluster.yaml").write_text(json.dumps(
            {**base, "platform": {**base["platform"], "values": mutate(base["platform"]["values"], rng)}}))
        for attempt in (render, lambda p, **o: render(p, refuse=False, **o).findings):
            with contextlib.suppress(RenderError):
                attempt(folder)
    capsys.readouterr()
