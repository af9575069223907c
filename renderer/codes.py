"""Every code cozy-render can print that is not a reference rule: input, contradiction, integration,
schema and I/O codes. Reference rules (GPU-05, PLT-11, ...) live in ``renderer.check.rules``; together the
two make the registry that ``cozy-render rules [CODE]`` lists and explains.

A module that prints a new code declares it in its own ``CODES`` list and is named in
``CODE_MODULES`` below; ``tests/test_codes.py`` scans the source for emitted codes and fails on
one that is not registered.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import importlib
from typing import NamedTuple

from renderer.errors import ERROR, WARNING

# Families, in the order `cozy-render rules` lists them after the reference rules.
FAMILIES = {
    "OVL": "Overlay input (refused before anything renders)",
    "VLAN": "Contradictions inside the vlans: list",
    "SCHEMA": "Output schema validation",
    "CMP": "Argo CD Config Management Plugin",
    "FLUX": "Flux committed output",
    "OUT": "Output folders (--out)",
    "CLI": "Command-line usage",
    "DIFF": "Diff against the live state",
    "DOC": "Doctor: the GPU route on the live cluster",
}


class Code(NamedTuple):
    """One registered non-rule code."""

    id: str
    severity: str
    summary: str
    explanation: str
    source: str  # the reference section, upstream file or design reason behind it

    @property
    def family(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def sources(self) -> tuple[str, ...]:
        return (self.source,)


CODES: list[Code] = [
    Code("OVL-YAML", ERROR, "A layer or manifest file is not YAML cozy-render accepts",
         "The file does not parse, has duplicate keys, or uses a tag outside the YAML core schema "
         "(`!!python/...`, `!!set`, custom tags). Fix the file; cozy-render never guesses a meaning.",
         "design.md, Overlay format; YAML 1.2 core schema"),
    Code("OVL-SCHEMA", ERROR, "An overlay key or value breaks the overlay schema",
         "Unknown keys (with a did-you-mean), wrong types and missing required keys. "
         "`cozy-render schema overlay` prints the schema.",
         "design.md, Overlay format"),
    Code("OVL-INHERIT", ERROR, "An inherits chain is a cycle or too deep",
         "Each layer is applied once, at its first position; a file that inherits itself, directly or "
         "through others, has no order.",
         "design.md, Layering"),
    Code("OVL-PATH", ERROR, "A path is missing, not a file, or outside the repository",
         "inherits and manifests paths are relative to the file that names them and must stay inside the "
         "overlay repository (symlinks included). A render reads nothing outside it.",
         "SECURITY: untrusted Git content in a shared Argo CD repo-server"),
    Code("OVL-NAME", ERROR, "metadata.name differs from the cluster folder name",
         "clusters/<name>/cluster.yaml must carry metadata.name <name>: labels, --out folders and Argo CD "
         "Applications are keyed by it.",
         "design.md, Repository layout"),
    Code("OVL-TEMPLATE", ERROR, "A Jinja2 template fails or the sandbox refuses it",
         "Templates run in Jinja2's sandbox with undefined variables as errors and bounded results.",
         "design.md, Templating"),
    Code("OVL-LIMIT", ERROR, "An input exceeds a documented budget",
         "Files over the size limit, documents that expand past the node budget (alias or merge-key "
         "bombs), nesting too deep, template output too large. Budgets are listed in SECURITY.md.",
         "SECURITY: bounded work on hostile input"),
    Code("OVL-PACKAGE", ERROR, "A packages: entry is malformed",
         "The key names the Package; apiVersion/kind, when given, must be cozystack.io/v1alpha1 Package; "
         "the platform Package is rendered from platform:, not packages:.",
         "reference (a), Package API"),
    Code("OVL-MANIFEST", ERROR, "A manifests: entry is not a Kubernetes object",
         "Each manifest needs apiVersion, kind and metadata.name, and labels must be a mapping.",
         "Kubernetes object conventions"),
    Code("OVL-DUPLICATE", ERROR, "The same object is rendered twice",
         "Two sources (a feature, packages:, manifests:) produce an object of the same group, kind, "
         "namespace and name; Argo CD and kustomize both refuse such a set.",
         "kustomize: may not add resource with an already registered id"),
    Code("OVL-GPU", ERROR, "The gpu: block contradicts itself or the platform values",
         "E.g. gpu.values with a bundle variant, a bundle variant where the iaas bundle does not render, "
         "or bundles.iaas.gpuOperatorVariant written by hand against gpu.variant.",
         "reference (c), Selecting a variant"),
    Code("OVL-ENDPOINT", ERROR, "The API server endpoint Hubble own mode needs is missing or malformed",
         "own mode rebuilds cozystack.networking as the platform would, which needs "
         "publishing.apiServerEndpoint as an https URL (or hubble.clusterConfigMap on isp-full-generic).",
         "reference (b), templates/bundles/system.yaml"),
    Code("VLAN-DUPLICATE", ERROR, "Two NADs of the same name in one namespace",
         "Each vlans: entry renders a NetworkAttachmentDefinition per namespace; two entries may not "
         "render the same name in the same namespace.",
         "reference (f), NetworkAttachmentDefinition"),
    Code("VLAN-CONFLICT", ERROR, "One bridge or link carries two VLANs",
         "A Linux bridge attaches one VLAN sub-interface; two vlans: entries on the same bridge, or the same "
         "VLAN ID twice on one uplink, leave no consistent host network.",
         "reference (f), netplan bridge per VLAN"),
    Code("VLAN-CONFIG", ERROR, "A vlans: entry cannot become a host link",
         "Link names must be valid and at most 15 characters, hostAddress needs a prefix length, and bridge "
         "and uplink must differ.",
         "Linux IFNAMSIZ; netplan"),
    Code("VLAN-TALOS", ERROR, "host.talosVersion cannot configure the VLAN bridges",
         "node-config writes a Talos machine-config patch for vlans:; host.talosVersion must be a Talos version "
         "(v1.x.y) recent enough to configure a bridge with a VLAN sub-interface.",
         "reference (f); Talos machine configuration (LinkConfig / BridgeConfig documents)"),
    Code("SCHEMA", ERROR, "A rendered object breaks its output schema",
         "Objects are validated offline against the CRDs and the core-kind schemas of the chosen Kubernetes "
         "version, as kubeconform does. A mistake a rule also catches is reported once, as the rule.",
         "reference/validation-and-live-state.md, kubeconform"),
    Code("CMP-PARAMS", ERROR, "Argo CD plugin parameters are malformed or unknown",
         "ARGOCD_APP_PARAMETERS must be a JSON list of {name, string|array|map}; `null` (a parameterless "
         "Application) means none. Known: vars (map), strict (\"true\"/\"false\"), kubernetes-version.",
         "argo-cd pkg/apis/application/v1alpha1/types.go; argo-cd#11900"),
    Code("CMP-EMPTY", ERROR, "The render produced no objects",
         "Argo CD treats empty plugin output as success and would prune the whole Application, so an empty "
         "render is refused.",
         "reference/gitops-anchors.md 1.4, Output contract"),
    Code("OUT-WRITE", ERROR, "An --out folder cannot be written",
         "The folder could not be created, staged or swapped in; nothing half-written is left behind.",
         "design.md, Output"),
    Code("OUT-NODECONFIG", ERROR, "node-config --out points at a folder of rendered manifests",
         "Node files are host configuration; inside a folder Flux or Argo CD applies they would be applied "
         "as (invalid) manifests, and --out would replace the manifests. Write them to their own folder.",
         "design.md, node-config"),
    Code("OVL-VARIANTS", ERROR, "A variant data file is missing",
         "A feature needs a file of the variants folder (shipped, or --variants DIR) that is not there.",
         "design.md, Variants are data"),
    Code("CLI-EXPLAIN", ERROR, "explain was asked for a key the merged overlay does not set",
         "Give a dotted key that `cozy-render explain PATH` lists (gpu.variant, platform.values.bundles...).",
         "cozy-render explain"),
    Code("CLI-RULES", ERROR, "rules was asked for a code that is not registered",
         "`cozy-render rules` lists every rule and code.",
         "cozy-render rules"),
]

# Modules that declare further codes in a CODES list of their own (diff, the platform chart, ...).
CODE_MODULES: tuple[str, ...] = ("renderer.diff.codes", "renderer.cmp", "renderer.check.flux",
                                 "renderer.commands.init", "renderer.output.codes", "renderer.effective",
                                 "renderer.doctor.codes", "renderer.preview.codes", "renderer.daemon.codes",
                                 "renderer.shard")

assert all(c.severity in (ERROR, WARNING) for c in CODES)


def all_codes() -> dict[str, Code]:
    """Every registered non-rule code, by ID (duplicates are a bug)."""
    out: dict[str, Code] = {}
    lists = [CODES] + [importlib.import_module(name).CODES for name in CODE_MODULES]
    for codes in lists:
        for c in codes:
            if c.id in out:
                raise ValueError(f"code {c.id} registered twice")
            out[c.id] = c
    return out
