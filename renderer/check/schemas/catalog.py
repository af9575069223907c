"""Which schemas ship, where they live, and kubeconform's names for them.

Naming follows kubeconform v0.7.0 (``yannh/kubeconform:pkg/registry/registry.go``, ``schemaPath``):
``{{ .ResourceKind }}{{ .KindSuffix }}`` is ``lower(kind)`` + ``-`` + lower(first DNS label of the
group) [+ ``-`` + lower(version) when the apiVersion has a ``/``], so ``apps/v1 Deployment`` is
``deployment-apps-v1`` and core ``v1 Service`` is ``service-v1``. That string is also our schema id.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
CRD_DIR = DATA / "crds"  # the CRD YAML, byte-for-byte copies (see data/README.md)
CRD_SCHEMA_DIR = DATA / "crd-schemas"  # openapi2jsonschema output, CRDs-catalog layout {group}/{kind}_{version}.json
CORE_DIR = DATA / "core"  # one v<X.Y.Z>.json.gz per bundled Kubernetes version
COMPILED_PACKAGE = "renderer._generated.schema_validators"
COMPILED_DIR = HERE.parent.parent / "_generated" / "schema_validators"

# The default is a choice, not a Cozystack fact: the kinds below validate the same way in every bundled
# version (tests/schemas check which of them differ), and a middle version neither accepts fields only
# recent clusters know nor rejects ones older clusters have had for years. `--kubernetes-version` overrides.
DEFAULT_KUBERNETES_VERSION = "1.33.0"

# Core kinds with a bundled schema: the ones the renderer and its features emit (Namespace, ConfigMap,
# DaemonSet, Secret, ...) plus the usual companions of an extra DaemonSet/Deployment manifest (its
# ServiceAccount, RBAC, Service). Any other kind is skipped, like kubeconform -ignore-missing-schemas.
CORE_KINDS: tuple[tuple[str, str], ...] = (
    ("v1", "ConfigMap"),
    ("v1", "Namespace"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "Deployment"),
    ("batch/v1", "Job"),  # gpu.verify: the documentation's sample CUDA pod as a Job (renderer.resolve.features.gpu)
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
)

# (apiVersion, kind) -> CRD file in CRD_DIR. The build checks each file really defines that kind.
CRD_KINDS: dict[tuple[str, str], str] = {
    ("cozystack.io/v1alpha1", "Package"): "cozystack.io_packages.yaml",
    ("cozystack.io/v1alpha1", "PackageSource"): "cozystack.io_packagesources.yaml",
    ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"): "network-attachment-definitions.k8s.cni.cncf.io.yaml",
}

VERSION_RE = re.compile(r"^v?(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?$")  # bounded: int() of 5,000 digits raises


def kind_suffix(api_version: str) -> str:
    """kubeconform's ``{{ .KindSuffix }}``; for core ``v1`` the "group" is ``v1`` itself (upstream quirk)."""
    group_parts = api_version.split("/")
    suffix = "-" + group_parts[0].split(".")[0].lower()
    if len(group_parts) > 1:
        suffix += "-" + group_parts[1].lower()
    return suffix


def schema_id(api_version: str, kind: str) -> str:
    """``{{ .ResourceKind }}{{ .KindSuffix }}``: the file stem kubeconform looks up, e.g. ``deployment-apps-v1``."""
    return kind.lower() + kind_suffix(api_version)


def catalog_path(api_version: str, kind: str) -> str:
    """The CRDs-catalog layout ``{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json``."""
    group_parts = api_version.split("/")
    return f"{group_parts[0]}/{kind.lower()}_{group_parts[-1]}.json"


def module_name(sid: str, kubernetes_version: str | None) -> str:
    """Name of the pre-generated validator module; CRD schemas do not depend on the Kubernetes version."""
    stem = sid.replace("-", "_").replace(".", "_")
    if kubernetes_version is None:
        return f"crd__{stem}"
    return f"k8s_v{kubernetes_version.replace('.', '_')}__{stem}"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def bundled_versions() -> list[str]:
    """Kubernetes versions with a core schema bundle, oldest first (``1.25.0`` ... )."""
    names = [n[1:-len(".json.gz")] for n in os.listdir(CORE_DIR) if n.startswith("v") and n.endswith(".json.gz")]
    return sorted(names, key=_version_key)


def normalize_kubernetes_version(value: str | None) -> str:
    """``None`` -> the default; ``1.32``, ``1.32.0`` and ``v1.32.0`` -> ``1.32.0``.

    Raises ValueError naming the bundled versions when there is no bundle for it: a schema for a
    different minor silently accepts or rejects fields that the cluster would not.
    """
    if value is None:
        return DEFAULT_KUBERNETES_VERSION
    match = VERSION_RE.match(value.strip())
    bundled = bundled_versions()
    if match:
        version = f"{int(match.group(1))}.{int(match.group(2))}.{int(match.group(3) or 0)}"
        if version in bundled:
            return version
        # Schemas are bundled per minor (vX.Y.0): any patch release of a bundled minor uses it.
        minor = f"{int(match.group(1))}.{int(match.group(2))}.0"
        if minor in bundled:
            return minor
    shown = repr(value) if len(value) <= 40 else f"{value[:40]!r}... ({len(value) - 40} more characters)"
    raise ValueError(
        f"no bundled schemas for Kubernetes {shown}; bundled: {', '.join(bundled)} "
        f"(default {DEFAULT_KUBERNETES_VERSION})"
    )


def core_ids() -> dict[tuple[str, str], str]:
    return {(api, kind): schema_id(api, kind) for api, kind in CORE_KINDS}


_CORE_IDS = core_ids()


def lookup(api_version: str, kind: str) -> tuple[str, bool] | None:
    """``(schema id, is_crd)`` for a kind we ship a schema for; None means the object is skipped."""
    key = (api_version, kind)
    if key in CRD_KINDS:
        return schema_id(api_version, kind), True
    sid = _CORE_IDS.get(key)
    return (sid, False) if sid is not None else None
