"""The overlay's shape, defined once here, and its validation, with did-you-mean for unknown keys.

``DEFINITION`` is the one hand-written definition. ``python -m renderer.generate`` builds from it:

- the merged overlay's schema (``renderer/data/overlay.schema.json``, ``cozy-render schema overlay``),
  with ``enum`` lists for ``platform.variant`` and ``platform.version`` taken from the vendored charts;
- the layer schema for editors (``renderer/data/overlay-layer.schema.json``, ``cozy-render schema
  overlay --layer``): nothing required, ``key: null`` (a deletion) allowed, ``key+`` for list keys;
- the same two files at the repository's stable path ``schemas/`` (for modelines and schema stores);
- the loader's validators (``renderer/_generated/overlay_validator.py``, fastjsonschema ahead of time,
  so a render neither imports jsonschema nor generates code);
- ``docs/overlay-reference.md`` (``renderer.docs_reference``).

Each layer is validated against the schema with every ``required`` removed (a base is partial); the
merged overlay against the full schema. Where the loader and a stock Draft 7 validator with the
layer schema disagree, ``LOADER_DIFFERS`` says why (``tests/load/test_schema_agrees.py`` holds both to it).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location, RenderError
from renderer.load.yamlio import KEY, Locations

DATA = Path(__file__).parent.parent / "data"
SCHEMA_FILE = DATA / "overlay.schema.json"
# The published schema of one layer file (a base or a cluster file), for editors; shipped in the wheel.
LAYER_SCHEMA_FILE = DATA / "overlay-layer.schema.json"
# The repository's stable copies: a modeline or a schema store can name them by a path or a raw URL at
# a release tag (CHANGELOG.md), whatever the package's layout becomes.
PUBLISHED = Path(__file__).resolve().parents[2] / "schemas"
SCHEMA_ID = "https://render.cozystack.io/schemas/overlay-v1alpha1.json"
LAYER_ID = "https://render.cozystack.io/schemas/overlay-layer-v1alpha1.json"
GENERATED = Path(__file__).parent.parent / "_generated" / "overlay_validator.py"
CATALOGUES = Path(__file__).parent.parent / "_generated" / "platform"  # renderer.platform_chart.catalogue
APPEND_SUFFIX = "+"  # renderer.load.overlay.APPEND_SUFFIX (imported from there would make a cycle)
# overlay.py refuses ``inherits+`` (a layer's inherits is its own list: nothing to append to).
NO_APPEND = frozenset({"inherits"})

# Keys whose enum comes from the vendored platform charts (renderer/platform_chart/charts/<version>/).
CHART_ENUMS: dict[tuple[str, ...], str] = {
    ("platform", "variant"): "variants",
    ("platform", "version"): "versions",
}

# Where the loader's verdict differs from a stock Draft 7 validator with the published schemas, and why.
LOADER_DIFFERS: dict[str, str] = {
    "platform.variant": (
        "the published schemas list the vendored charts' variants (editors complete and flag them); the loader "
        "accepts any string and check refuses an unknown one with PLT-02, the chart's own fail message"),
    "platform.version": (
        "the published schemas list the vendored chart versions; the loader accepts any non-empty string, "
        "for `diff --effective --platform-chart DIR` on a chart cozy-render does not ship"),
    "one document": (
        "an overlay file holds exactly one YAML document; a schema describes one document, and editors "
        "validate each document of a multi-document file on its own"),
    "required": (
        "a layer cannot know what its bases provide; the merged overlay must hold the required keys "
        "(cozy-render schema overlay)"),
}

DEFINITION: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "$id": SCHEMA_ID,
    "title": "cozy-render ClusterOverlay",
    "description": (
        "One Cozystack cluster's overlay, layered on shared bases with inherits. See the cozy-render "
        "README."
    ),
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "host", "platform"],
    "properties": {
        "apiVersion": {
            "const": "render.cozystack.io/v1alpha1",
            "description": "Always render.cozystack.io/v1alpha1.",
        },
        "kind": {"const": "ClusterOverlay", "description": "Always ClusterOverlay."},
        "metadata": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name"],
            "properties": {
                "name": {
                    "type": "string",
                    "pattern": "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
                    "description": "Cluster name; must equal the cluster directory name.",
                },
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": (
                        "Labels of the overlay itself (for your tooling); not copied to rendered objects."
                    ),
                },
                "annotations": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": (
                        "Annotations of the overlay itself (for your tooling); not copied to rendered "
                        "objects."
                    ),
                },
            },
            "description": (
                "The cluster's identity; only the cluster file sets it (a base's metadata is ignored)."
            ),
        },
        "inherits": {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "Earlier layers, relative to this file, applied in order before it."
            ),
        },
        "vars": {"type": "object", "description": "Jinja2 context for string values (vars.*)."},
        "host": {
            "type": "object",
            "additionalProperties": False,
            "required": ["os"],
            "properties": {
                "os": {
                    "enum": ["apt", "talos"],
                    "description": (
                        "apt: Ubuntu/Debian hosts installed with apt; talos: Talos Linux."
                    ),
                },
                "nvidiaDriver": {
                    "type": "boolean",
                    "description": (
                        "apt GPU nodes have an NVIDIA driver installed on the host."
                    ),
                },
                "nvidiaContainerRuntime": {
                    "type": "boolean",
                    "description": (
                        "apt GPU nodes have nvidia-container-toolkit registered with containerd (nvidia-ctk"
                        " runtime configure)."
                    ),
                },
                "gpuModel": {
                    "type": "string",
                    "description": (
                        "GPU model on the nodes (e.g. A100, T4, L40S); decides mdev vs SR-IOV vGPU."
                    ),
                },
                "cniPluginsProvided": {
                    "type": "boolean",
                    "description": (
                        "The hosts already ship the bridge CNI plugin in /opt/cni/bin."
                    ),
                },
                "talosVersion": {
                    "type": "string",
                    "description": (
                        "Talos version of the nodes (e.g. v1.13.6); picks the machine-config form."
                    ),
                },
                "nodes": {
                    "type": "array",
                    "description": (
                        "Facts about individual nodes (name, labels); rules that need node facts (GPU-09) "
                        "are skipped without them."
                    ),
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "Kubernetes node name."},
                            "labels": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                                "description": (
                                    "Node labels (e.g. nvidia.com/gpu.workload.config) the GPU rules read."
                                ),
                            },
                        },
                    },
                },
            },
            "description": "Facts about the cluster's hosts that decide GPU and VLAN routes.",
        },
        "platform": {
            "type": "object",
            "additionalProperties": False,
            "required": ["variant"],
            "properties": {
                "variant": {
                    "type": "string",
                    "description": (
                        "Platform Package variant: default, or a values-<variant>.yaml of the vendored chart "
                        "(the enum); check refuses any other with the chart's message (PLT-02)."
                    ),
                },
                "version": {
                    "type": "string",
                    "minLength": 1,
                    "description": (
                        "Cozystack platform chart version the cluster runs: a folder `cozy-render "
                        "platforms` lists (v1.6.2, main-3c780ac). Default v1.6.2, the latest vendored release; "
                        "another version is error PLT-VERSION. Picks the chart the rules, the features, `check` "
                        "and `effective` use."
                    ),
                },
                "values": {
                    "type": "object",
                    "description": (
                        "Merged into spec.components.platform.values of cozystack.cozystack-platform. "
                        "Free-form, except that the keys cozy-render reads must have the platform chart's "
                        "types."
                    ),
                    "properties": {
                        "bundles": {
                            "type": "object",
                            "properties": {
                                "enabledPackages": {
                                    "type": ["array", "object"],
                                    "description": (
                                        "Optional packages to render (full cozystack. names). An empty map is "
                                        "accepted as the chart accepts it (`default (list)` makes it an empty "
                                        "list); a non-empty map fails the chart's `has` (PLT-13). An entry that "
                                        "is not a string renders (Sprig `has` never matches it) and has no "
                                        "effect (PLT-08)."
                                    ),
                                },
                                "disabledPackages": {
                                    "type": ["array", "object"],
                                    "items": {"type": "string"},
                                    "description": (
                                        "Packages the platform must not render; wins over enabledPackages. An "
                                        "empty map is accepted as the chart accepts it (`default (list)` makes it "
                                        "an empty list); a non-empty map fails the chart's `has` (PLT-13)."
                                    ),
                                },
                                "system": {
                                    "type": "object",
                                    "description": "System bundle values (enabled, ...).",
                                },
                                "iaas": {
                                    "type": "object",
                                    "description": (
                                        "IaaS bundle values (enabled, gpuOperatorVariant, ...); gpu.variant"
                                        " sets gpuOperatorVariant."
                                    ),
                                },
                                "paas": {
                                    "type": "object",
                                    "description": "PaaS bundle values.",
                                },
                                "naas": {
                                    "type": "object",
                                    "description": "NaaS bundle values.",
                                },
                            },
                            "description": (
                                "Bundle switches of the platform chart (templates/bundles/*.yaml)."
                            ),
                        },
                        "networking": {
                            "type": "object",
                            "description": (
                                "Cluster networking the system bundle renders into cozystack.networking "
                                "(CIDRs, kubeovn, encryption)."
                            ),
                        },
                        "publishing": {
                            "type": "object",
                            "description": (
                                "How the cluster is reached: host, apiServerEndpoint, exposedServices."
                            ),
                        },
                        "gpu": {
                            "type": "object",
                            "description": (
                                "Platform gpu.* values (templates/bundles/iaas.yaml); the gpu.* overlay "
                                "knobs are forwarded here."
                            ),
                        },
                        "monitoring": {
                            "type": "object",
                            "description": "Monitoring values of the platform chart.",
                        },
                        "gateway": {
                            "type": "object",
                            "description": (
                                "Gateway values of the platform chart (http2, ...)."
                            ),
                        },
                        "authentication": {
                            "type": "object",
                            "description": "Authentication values of the platform chart.",
                        },
                        "resources": {
                            "type": "object",
                            "description": "Resource presets of the platform chart.",
                        },
                        "telemetry": {
                            "type": "object",
                            "description": "Telemetry values of the platform chart.",
                        },
                    },
                },
            },
            "description": "The platform Package cozystack.cozystack-platform.",
        },
        "gpu": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "variant": {
                    "enum": ["none", "default", "vgpu", "container"],
                    "description": (
                        "none: nothing; default: passthrough to VMs (bundle); vgpu: NVIDIA vGPU for VMs "
                        "(bundle, apt only); container: GPUs for pods (standalone Package, or the Talos "
                        "native overlay)."
                    ),
                },
                "hami": {
                    "type": "boolean",
                    "description": (
                        "Enable cozystack.hami (GPU sharing) next to the operator; default and vgpu only."
                    ),
                },
                "verify": {
                    "type": "boolean",
                    "description": (
                        "Render the documentation's sample CUDA pod (nvidia-smi on one nvidia.com/gpu) as a Job: "
                        "an Argo CD PostSync hook, a plain Job for Flux. gpu.variant container only (pod GPUs); "
                        "`cozy-render doctor` reports its result."
                    ),
                },
                "permittedHostDevices": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "pciHostDevices": {
                            "type": "array",
                            "items": {"type": "object"},
                            "description": (
                                "PCI passthrough entries (pciVendorSelector, resourceName)."
                            ),
                        },
                        "mediatedDevices": {
                            "type": "array",
                            "items": {"type": "object"},
                            "description": (
                                "Mediated (vGPU) device entries (mdevNameSelector, resourceName)."
                            ),
                        },
                    },
                    "description": (
                        "KubeVirt permittedHostDevices forwarded to platform gpu.permittedHostDevices."
                    ),
                },
                "replaceDefaults": {
                    "type": "boolean",
                    "description": (
                        "true: the platform does not prepend its built-in passthrough device table."
                    ),
                },
                "mediatedDevicesConfiguration": {
                    "type": "object",
                    "description": (
                        "KubeVirt mediatedDevicesConfiguration (which vGPU types the nodes create)."
                    ),
                },
                "vgpuManager": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "repository": {
                            "type": "string",
                            "description": "Registry path of the vGPU manager image.",
                        },
                        "image": {
                            "type": "string",
                            "description": "Image name of the vGPU manager.",
                        },
                        "version": {
                            "type": "string",
                            "description": (
                                "Image tag (driver version and OS, e.g. 595.58.02-ubuntu24.04)."
                            ),
                        },
                        "imagePullSecrets": {
                            "type": "array",
                            "description": "Secrets for pulling the vGPU manager image.",
                        },
                    },
                    "description": (
                        "The NVIDIA vGPU manager image (licensed; from your registry)."
                    ),
                },
                "vgpuDeviceManager": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "enabled": {
                            "type": "boolean",
                            "description": (
                                "Run the vGPU device manager (creates the configured vGPU devices)."
                            ),
                        },
                    },
                    "description": "The NVIDIA vGPU device manager.",
                },
                "values": {
                    "type": "object",
                    "description": (
                        "gpu.variant container only: merged into spec.components.gpu-operator.values of the"
                        " standalone Package (apt container Package or Talos native Package); NVIDIA "
                        "operator values go under its gpu-operator: key."
                    ),
                },
            },
            "description": (
                "The GPU operator route: host.os x gpu.variant picks what is rendered (docs/how-to/gpu.md)."
            ),
        },
        "hubble": {
            "type": "object",
            "additionalProperties": False,
            "description": (
                "Hubble on Package cozystack.networking (spec.components.cilium.values.cilium.hubble). "
                "Needs the Cozystack-managed Cilium: platform isp-full or isp-full-generic (HUB-02)."
            ),
            "properties": {
                "enabled": {
                    "type": "boolean",
                    "description": (
                        "Render the recommended Hubble values (relay, UI, the dashboards' metrics list, a "
                        "metrics ServiceMonitor)."
                    ),
                },
                "ownership": {
                    "enum": ["patch", "own"],
                    "description": (
                        "patch (default): a partial cozystack.networking applied server-side after the "
                        "platform created it (later Argo CD sync wave; Flux: a second Kustomization with "
                        "dependsOn). own: cozystack.networking goes into bundles.disabledPackages and "
                        "cozy-render renders the whole object as the platform would."
                    ),
                },
                "relay": {
                    "type": "object",
                    "description": "Merged onto the recommended hubble.relay values.",
                },
                "ui": {
                    "type": "object",
                    "description": "Merged onto the recommended hubble.ui values.",
                },
                "metrics": {
                    "type": "object",
                    "description": (
                        "Merged onto the recommended hubble.metrics values (a metrics.enabled list replaces"
                        " the recommended one)."
                    ),
                },
                "values": {
                    "type": "object",
                    "description": (
                        "Raw cilium.hubble chart values, merged last over everything else."
                    ),
                },
                "clusterConfigMap": {
                    "type": "object",
                    "additionalProperties": False,
                    "description": (
                        "own on isp-full-generic: the data of ConfigMap cozy-system/cozystack on the live "
                        "cluster. The platform reads these keys first (lookup at reconcile time) and falls "
                        "back to the platform values; set them here when the ConfigMap has them, or the "
                        "owned object will differ from what the platform would render."
                    ),
                    "properties": {
                        "api-server-endpoint": {
                            "type": "string",
                            "description": (
                                "api-server-endpoint of ConfigMap cozy-system/cozystack."
                            ),
                        },
                        "ipv4-pod-cidr": {
                            "type": "string",
                            "description": (
                                "ipv4-pod-cidr of ConfigMap cozy-system/cozystack."
                            ),
                        },
                        "ipv4-pod-gateway": {
                            "type": "string",
                            "description": (
                                "ipv4-pod-gateway of ConfigMap cozy-system/cozystack."
                            ),
                        },
                        "ipv4-svc-cidr": {
                            "type": "string",
                            "description": (
                                "ipv4-svc-cidr of ConfigMap cozy-system/cozystack."
                            ),
                        },
                        "ipv4-join-cidr": {
                            "type": "string",
                            "description": (
                                "ipv4-join-cidr of ConfigMap cozy-system/cozystack."
                            ),
                        },
                    },
                },
            },
        },
        "vlans": {
            "type": "array",
            "description": (
                "External VLANs for VMs: one bridge NetworkAttachmentDefinition per entry and namespace; "
                "`cozy-render node-config` writes the node bridge (netplan or Talos)."
            ),
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "id", "uplink", "bridge", "namespaces"],
                "properties": {
                    "name": {
                        "type": "string",
                        "pattern": "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
                        "description": "NAD name; vm-instance networks[].name refers to it.",
                    },
                    "id": {
                        "type": "integer",
                        "description": "802.1Q VLAN id, 1-4094 (NET-11).",
                    },
                    "uplink": {
                        "type": "string",
                        "description": (
                            "Node link that carries the tagged VLAN (e.g. eno2); the VLAN link is "
                            "<uplink>.<id>."
                        ),
                    },
                    "bridge": {
                        "type": "string",
                        "description": (
                            "Node bridge enslaving the VLAN link; the NAD's \"bridge\"."
                        ),
                    },
                    "namespaces": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "uniqueItems": True,
                        "description": (
                            "Tenant namespaces whose VMs attach to this VLAN (one NAD copy each)."
                        ),
                    },
                    "type": {
                        "enum": ["bridge", "macvlan", "ipvlan"],
                        "description": (
                            "CNI type; only bridge works for VMs (macvlan/ipvlan are refused, NET-01)."
                        ),
                    },
                    "hostAddress": {
                        "type": "string",
                        "description": (
                            "Optional node address on the bridge, with prefix (203.0.113.2/24). No default "
                            "route is ever put on the bridge."
                        ),
                    },
                    "gateway": {
                        "type": "string",
                        "description": (
                            "Refused (NET-10): a gateway on the VLAN bridge would move the node's default "
                            "route off the management interface."
                        ),
                    },
                    "routes": {
                        "type": "array",
                        "description": (
                            "Extra node routes via the bridge (not a default route: NET-10)."
                        ),
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["to", "via"],
                            "properties": {
                                "to": {
                                    "type": "string",
                                    "description": (
                                        "Destination prefix (e.g. 198.51.100.0/24)."
                                    ),
                                },
                                "via": {
                                    "type": "string",
                                    "description": "Gateway address on the VLAN.",
                                },
                            },
                        },
                    },
                    "mtu": {
                        "type": "integer",
                        "description": "MTU of the VLAN link, the bridge and the NAD.",
                    },
                    "ipam": {
                        "type": "object",
                        "description": (
                            "NAD ipam; keep it empty (NET-05): the guest sets its address."
                        ),
                    },
                },
            },
        },
        "packages": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"},
            "additionalProperties": {
                "type": "object",
                "description": (
                    "spec of a Package named by the key (variant, components, ignoreDependencies); metadata"
                    " is allowed for labels and annotations."
                ),
            },
            "description": (
                "Extra Packages, or values merged over Packages a feature renders; the key is the Package "
                "name."
            ),
        },
        "manifests": {
            "type": "array",
            "items": {
                "anyOf": [{"type": "string"}, {"type": "object"}],
            },
            "description": (
                "Extra objects: paths to YAML files in the repository, or inline objects."
            ),
        },
        "diff": {
            "type": "object",
            "additionalProperties": False,
            "description": "Settings for `cozy-render diff`.",
            "properties": {
                "ignore": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "description": (
                        "Paths diff never reports: a JSON pointer (/spec/replicas), optionally scoped as "
                        "KIND:POINTER, KIND/NAME:POINTER or KIND/NAMESPACE/NAME:POINTER (NAME may be *). "
                        "Added to --ignore."
                    ),
                },
            },
        },
        "live": {
            "type": "object",
            "additionalProperties": False,
            "description": "How `cozy-render diff` reaches this cluster's API server.",
            "properties": {
                "context": {
                    "type": "string",
                    "minLength": 1,
                    "description": (
                        "kubeconfig context for this cluster (default: the context named like the cluster)."
                    ),
                },
            },
        },
    },
}


def _chart_enums() -> dict[str, list[str]]:
    """The variants and versions of the vendored charts (every shipped version's variants), read from
    their generated catalogues (``renderer/_generated/platform/<version>.json``, one per chart folder;
    ``python -m renderer.generate`` writes them before these schemas): the load stage imports no later one."""
    catalogues = sorted(CATALOGUES.glob("*.json"))
    variants = sorted({name for path in catalogues
                       for name in json.loads(path.read_text(encoding="utf-8"))["variantValues"]})
    return {"variants": variants, "versions": [path.stem for path in catalogues]}


def _at(node: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for key in path:
        node = node["properties"][key]
    return node


def merged_schema(enums: bool = True) -> dict[str, Any]:
    """The merged overlay's schema; ``enums=False`` leaves out the chart enums the loader does not enforce."""
    out = copy.deepcopy(DEFINITION)
    if enums:
        values = _chart_enums()
        for path, source in CHART_ENUMS.items():
            _at(out, path)["enum"] = values[source]
    return out


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The published merged schema, as shipped (read, not built: the render path imports no chart data)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _without_required(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_required(v) for k, v in node.items() if k != "required"}
    if isinstance(node, list):
        return [_without_required(v) for v in node]
    return node


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` or null: in a layer, ``key: null`` deletes the inherited key (whatever its type)."""
    out = dict(node)
    if "const" in out:
        out["enum"] = [out.pop("const"), None]
    elif "enum" in out:
        out["enum"] = [*out["enum"], None]
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    elif isinstance(out.get("type"), list) and "null" not in out["type"]:
        out["type"] = [*out["type"], "null"]
    elif "anyOf" in out:
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    return out


def _layer_node(node: Any, under_list: bool = False) -> Any:
    """One file's view of ``node``: every list key also spelled ``key+`` (append to the inherited list),
    and every mapping value outside lists nullable. The loader merges list items whole, so a null inside
    a list item is a value, not a deletion."""
    if isinstance(node, list):
        return [_layer_node(v, under_list) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "items":
            out[key] = _layer_node(value, True)
        elif key == "properties" and isinstance(value, dict):
            props: dict[str, Any] = {}
            for name, sub in value.items():
                layered = _layer_node(sub, under_list)
                props[name] = layered if under_list else _nullable(layered)
            for name, sub in value.items():
                if isinstance(sub, dict) and sub.get("type") == "array" and name not in NO_APPEND:
                    appended = dict(props[name])
                    appended["description"] = (f"Appended to the inherited {name} list. "
                                               + sub.get("description", ""))
                    props[name + APPEND_SUFFIX] = appended
            out[key] = props
        elif key == "additionalProperties" and isinstance(value, dict):
            layered = _layer_node(value, under_list)
            out[key] = layered if under_list else _nullable(layered)
        else:
            out[key] = _layer_node(value, under_list)
    return out


def layer_schema() -> dict[str, Any]:
    """What any one overlay file may hold: the overlay schema with nothing required (a base is
    partial; the merged overlay is checked against the full schema), ``key: null`` allowed (it deletes
    the inherited key), and every list key but ``inherits`` also spelled ``key+``."""
    layer: dict[str, Any] = _layer_node(_without_required(merged_schema()))
    layer["$id"] = LAYER_ID
    layer["title"] = "cozy-render ClusterOverlay layer (one file)"
    layer["description"] = ("One overlay file, a shared base or a cluster's cluster.yaml: nothing is required "
                            "here; the merged overlay must hold apiVersion, kind, metadata, host and platform. "
                            "`key+` appends to an inherited list (not inherits+); `key: null` deletes an "
                            "inherited key.")
    return layer


def _json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def schema_source() -> str:
    return _json(merged_schema()).decode()


def layer_schema_source() -> str:
    return _json(layer_schema()).decode()


def expected_files() -> dict[Path, bytes]:
    """The published schema files: in the package (``schema overlay``) and at the stable ``schemas/``."""
    merged, layer = _json(merged_schema()), _json(layer_schema())
    return {SCHEMA_FILE: merged, LAYER_SCHEMA_FILE: layer,
            PUBLISHED / SCHEMA_FILE.name: merged, PUBLISHED / LAYER_SCHEMA_FILE.name: layer}


def generated_source() -> str:
    """The module ``_generated/overlay_validator.py`` should hold for the current definition."""
    import re

    import fastjsonschema

    from renderer.jsonschema_runtime import rewrite

    full = merged_schema(enums=False)
    layer = _without_required(full)
    layer["$id"] = SCHEMA_ID.replace(".json", "-layer.json")  # distinct generated function names
    parts, names = [], []
    for doc in (full, layer):
        code = fastjsonschema.compile_to_code(doc)
        found = re.search(r"^def (validate\w*)\(data", code, re.M)
        assert found is not None, "fastjsonschema output always defines a validate function"
        names.append(found.group(1))
        parts.append(rewrite(code))
    header = ('"""Generated by `python -m renderer.generate` from renderer/load/overlay_schema.py (DEFINITION); '
              'do not edit."""\n# ruff: noqa\n# fmt: off\n')
    return (header + "\n".join(parts)
            + f"\n\nvalidate_full = {names[0]}\nvalidate_partial = {names[1]}\n")


def _validator(partial: bool) -> Callable[[Any], Any]:
    from renderer._generated import overlay_validator as generated

    return generated.validate_partial if partial else generated.validate_full


def validate_layer(data: Any, locs: Locations, display: str) -> None:
    _validate(data, locs, display, partial=True)


def validate_merged(data: Any, locs: Locations, display: str) -> None:
    _validate(data, locs, display, partial=False)


def _validate(data: Any, locs: Locations, display: str, partial: bool) -> None:
    from renderer.jsonschema_runtime import JsonSchemaValueException  # not the package: see there

    try:
        _validator(partial)(data)
    except JsonSchemaValueException as exc:
        raise RenderError([_finding(exc, data, locs, display)]) from None


def _locate(locs: Locations, path: tuple[Any, ...], display: str) -> Location:
    while path not in locs and path:
        path = path[:-1]
    return locs.get(path) or Location(display, 1, 1)


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _finding(exc: Any, data: Any, locs: Locations, display: str) -> Finding:
    import difflib  # only on the error path

    path = tuple(int(p) if isinstance(p, str) and p.isdigit() and _is_list_at(data, exc.path[1:], i) else p
                 for i, p in enumerate(exc.path[1:]))
    where = _dotted(path)
    rule = exc.rule
    definition = exc.rule_definition
    value = exc.value
    if rule == "additionalProperties" and isinstance(value, dict):
        known = sorted((exc.definition or {}).get("properties", {}))
        unknown = sorted(set(value) - set(known))
        key = unknown[0] if unknown else "?"
        hint = difflib.get_close_matches(key, known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else (f" (known: {', '.join(known)})" if known else "")
        target = f"{where}.{key}" if path else key
        where_key = locs.get(path + (key, KEY)) or _locate(locs, path + (key,), display)
        return Finding("OVL-SCHEMA", f"unknown key {target!r}{suggestion}", where_key)
    if rule == "required":
        missing = [k for k in definition if not isinstance(value, dict) or k not in value]
        return Finding("OVL-SCHEMA", f"{where}: missing required key {missing[0]!r}", _locate(locs, path, display))
    if rule == "enum":
        hint = difflib.get_close_matches(str(value), [str(d) for d in definition], n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        return Finding("OVL-SCHEMA", f"{where}: {value!r} is not one of {', '.join(map(str, definition))}{suggestion}",
                       _locate(locs, path, display))
    if rule == "const":
        return Finding("OVL-SCHEMA", f"{where} must be {definition!r}, got {value!r}", _locate(locs, path, display))
    if rule == "type":
        want = definition if isinstance(definition, str) else " or ".join(definition)
        return Finding("OVL-SCHEMA", f"{where} must be {_article(want)}, got {_json_type(value)}",
                       _locate(locs, path, display))
    if rule == "anyOf":
        kinds = [str(d["type"]) for d in definition if isinstance(d, dict) and isinstance(d.get("type"), str)]
        if kinds:
            return Finding("OVL-SCHEMA", f"{where} must be {' or '.join(_article(k) for k in kinds)}, "
                                         f"got {_json_type(value)}", _locate(locs, path, display))
    if rule == "pattern":
        return Finding("OVL-SCHEMA", f"{where}: {value!r} does not match {definition}", _locate(locs, path, display))
    message = exc.message.replace("data.", "", 1).replace("data ", "", 1)
    return Finding("OVL-SCHEMA", message, _locate(locs, path, display))


def _is_list_at(data: Any, raw_path: list[Any], index: int) -> bool:
    node = data
    for p in raw_path[:index]:
        if isinstance(node, dict):
            node = node.get(p)
        elif isinstance(node, list) and str(p).isdigit():
            node = node[int(p)]
    return isinstance(node, list)


def _article(word: str) -> str:
    return ("an " if word[:1] in "aeio" else "a ") + word


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, list):
        return "array"
    return "object"
