"""``cozy-render init NAME``: scaffold a commented ``clusters/NAME/cluster.yaml`` that inherits the
repository's bases, then render and check it.

The bases are found, not assumed: every overlay file outside ``clusters/`` whose effective ``host.os``
(following its own ``inherits``) is the one asked for is a candidate, and the most specific one (the
longest chain) is inherited. The host facts each GPU route needs (GPU-04: no host driver for
passthrough and vGPU; GPU-10: the containerd runtime for the container variant on apt) are written
with a comment naming the rule, so a first render passes ``check``. Combinations Cozystack refuses
(GPU-05: vGPU on Talos) are refused here before anything is written.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from renderer import output, report
from renderer.codes import Code
from renderer.errors import (
    ERROR,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    WARNING,
    Finding,
    Location,
    RenderError,
)
from renderer.escape import quote
from renderer.load import limits
from renderer.load.overlay import find_root
from renderer.load.overlay_schema import LAYER_SCHEMA_FILE
from renderer.load.yamlio import display_path as shown
from renderer.load.yamlio import load_documents, read_text
from renderer.pipeline import Options
from renderer.pipeline import run as run_pipeline
from renderer.platform_chart import DEFAULT_VERSION
from renderer.requests import InitRequest

OS_CHOICES = ("apt", "talos")
GPU_CHOICES = ("none", "default", "vgpu", "container")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_VLAN = re.compile(r"^(\d+):([A-Za-z0-9][A-Za-z0-9_.\-]*):([a-z0-9][-a-z0-9,]*)$")

CODES: list[Code] = [
    Code("CLI-INIT", ERROR, "init cannot scaffold the cluster asked for",
         "The name is not a DNS label, the cluster file already exists (init never overwrites), a --vlan is not "
         "ID:UPLINK:NAMESPACE[,NAMESPACE...], the combination is one Cozystack refuses (vGPU on Talos, GPU-05), "
         "or no overlay tree (a folder holding clusters/ or base/) was found.",
         "README, Commands (cozy-render init); rule GPU-05"),
]


def _refuse(message: str, where: str = "", exit_code: int = EXIT_INPUT) -> RenderError:
    return RenderError([Finding("CLI-INIT", message, Location(where) if where else None)], exit_code)


def _usage(message: str) -> RenderError:
    """A bad argument or option (the name, a --vlan, a combination Cozystack refuses): exit 2, as Click's."""
    return _refuse(message, exit_code=EXIT_USAGE)


def tree_root(root: Path | None) -> Path:
    """The overlay tree init writes into: --root, else the working directory or the tree above it.

    A --root that does not exist is a typo, not a new tree (a new tree starts in a folder that is
    there: ``mkdir overlays && cozy-render init NAME --root overlays``)."""
    if root is not None:
        if not root.is_dir():
            raise _usage(f"--root {quote(str(root))} is not a folder; create it first to start a new overlay tree")
        return root
    here = Path.cwd()
    for candidate in (here, *here.parents):
        if (candidate / "clusters").is_dir() or (candidate / "base").is_dir():
            return candidate
        if candidate.name == "clusters":
            return candidate.parent
    raise _refuse("no overlay tree here (a folder holding clusters/ or base/); pass --root DIR")


class _Layers:
    """Every overlay layer init looks at, parsed once, within one render's budget (OVL-LIMIT past it)."""

    def __init__(self) -> None:
        self.budget = limits.start()
        self.parsed: dict[Path, dict[str, Any] | None] = {}

    def get(self, path: Path) -> dict[str, Any] | None:
        if path not in self.parsed:
            self.parsed[path] = self._load(path)
        return self.parsed[path]

    @staticmethod
    def _load(path: Path) -> dict[str, Any] | None:
        try:
            docs = load_documents(read_text(path, display_path(path)), display_path(path))
        except RenderError as exc:
            if any(f.code == "OVL-LIMIT" for f in exc.findings):
                raise  # the tree is larger than a render may read: refused, not silently skipped
            return None
        if len(docs) != 1 or not isinstance(docs[0][0], dict) or docs[0][0].get("kind") != "ClusterOverlay":
            return None
        data: dict[str, Any] = docs[0][0]
        return data

    def chain(self, path: Path) -> list[tuple[Path, dict[str, Any]]]:
        """The layers ``path`` applies, in order (its inherits first), as the loader applies them: a base
        shared by several parents (a diamond) once, at its first position; a cycle or a chain deeper than
        MAX_INHERITS_DEPTH is cut. Linear in the layers reached (80 diamond-inheriting files were
        exponential when every path through the diamond was walked: issue 25 item 3)."""
        applied: list[tuple[Path, dict[str, Any]]] = []
        done: set[Path] = set()
        stack: set[Path] = set()

        def visit(file: Path, depth: int) -> None:
            if file in done or file in stack or depth > limits.MAX_INHERITS_DEPTH:
                return
            data = self.get(file)
            if data is None:
                return
            stack.add(file)
            for raw in data.get("inherits") or []:
                if isinstance(raw, str) and raw and "\0" not in raw:
                    try:
                        visit((file.parent / raw).resolve(), depth + 1)
                    except (OSError, ValueError, RuntimeError):
                        continue  # a name the loader refuses (too long, a loop): not a base
            stack.discard(file)
            done.add(file)
            applied.append((file, data))

        visit(path, 0)
        return applied


def find_base(root: Path, host_os: str) -> tuple[Path | None, dict[str, Any]]:
    """The most specific base whose effective host.os is ``host_os``, and its effective top-level keys."""
    best: tuple[int, Path, dict[str, Any]] | None = None
    fallback: tuple[int, Path, dict[str, Any]] | None = None
    layers = _Layers()
    for path in sorted(_candidates(root)):
        chain = layers.chain(path.resolve())
        if not chain:
            continue
        effective: dict[str, Any] = {}
        for _, layer in chain:
            for key in ("host", "platform", "vars"):
                if isinstance(layer.get(key), dict):
                    effective[key] = {**effective.get(key, {}), **layer[key]}
        found_os = (effective.get("host") or {}).get("os")
        ranked = (len(chain), path, effective)
        if found_os == host_os and (best is None or len(chain) > best[0]):
            best = ranked
        elif (found_os is None or len(chain) == 1) and (fallback is None or len(chain) < fallback[0]):
            fallback = ranked
    chosen = best or fallback
    return (chosen[1], chosen[2]) if chosen else (None, {})


def _candidates(root: Path) -> list[Path]:
    """The ``*.yaml`` files of the tree outside clusters/, rendered/ and dot-folders, walked without
    following symlinked folders (a link loop, or a link out of the tree) and no deeper than a path may be."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, onerror=None, followlinks=False):
        rel = Path(folder).relative_to(root).parts
        if len(rel) > limits.MAX_DEPTH:
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (not rel and d in ("clusters", "rendered")))
        found += [Path(folder) / f for f in files if f.endswith(".yaml") and not f.startswith(".")]
    return found


def display_path(path: Path) -> str:
    return shown(path)


def _refuse_links_out(root: Path, target: Path) -> None:
    """init writes only inside the tree: a symlinked ``clusters/`` (or cluster folder) leading out of it
    is refused (issue 25 item 6), as ``render --out`` refuses one."""
    real_root = Path(os.path.realpath(root))
    for folder in (target.parent.parent, target.parent):
        real = Path(os.path.realpath(folder))
        if real != real_root and real_root not in real.parents:
            raise RenderError([Finding("OUT-UNSAFE", f"{quote(display_path(folder))} leads through a symlink to "
                                                     f"{quote(real)}, outside the tree {quote(display_path(root))}; "
                                                     "init writes only inside it", Location(display_path(folder)))])


def _create(target: Path, text: str) -> None:
    """Write the new cluster file whole or not at all, never over an existing one (even racing another
    init): staged beside it, then hard-linked into place (``link`` fails when the name exists), under the
    clusters/ folder's lock. Modes come from the umask."""
    import tempfile

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _refuse_links_out(target.parent.parent.parent, target)  # a link swapped in while creating it
        with output.locked(target.parent.parent, target):
            fd, staged = tempfile.mkstemp(prefix=".cluster.yaml.", dir=target.parent)
            try:
                os.fchmod(fd, 0o666 & ~output._umask())  # mkstemp's 0600 would stay the file's mode
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.link(staged, target)
            finally:
                os.unlink(staged)
    except FileExistsError:
        raise _refuse(f"{quote(display_path(target))} already exists; init never overwrites",
                      display_path(target)) from None
    except OSError as exc:
        raise RenderError([Finding("OUT-WRITE", f"cannot write {quote(display_path(target))}: {exc.strerror or exc}",
                                   Location(display_path(target)))]) from None


def parse_vlan(raw: str) -> tuple[int, str, list[str]]:
    found = _VLAN.match(raw)
    if not found:
        raise _usage(f"--vlan {raw!r} must be ID:UPLINK:NAMESPACE[,NAMESPACE...] (e.g. 100:eno2:tenant-example)")
    vlan_id = int(found.group(1))
    if not 1 <= vlan_id <= 4094:
        raise _usage(f"--vlan {raw!r}: VLAN id must be 1-4094 (NET-11)")
    return vlan_id, found.group(2), [n for n in found.group(3).split(",") if n]


SCHEMA_IN_TREE = Path(".cozy") / "overlay-layer.schema.json"


def schema_reference(root: Path, cluster_dir: Path) -> tuple[str, Path | None]:
    """What the new file's modeline points at, by a relative path that resolves: the layer schema
    committed in the tree (``.cozy/overlay-layer.schema.json`` in the overlay tree or at the Git root,
    docs/getting-started.md); else the file init writes there (returned second, to be written). Never
    the schema's ``$id`` (no server answers it) nor the installed package (a virtual environment's
    path is no one else's)."""
    repo = find_root(cluster_dir / "cluster.yaml").resolve()
    for candidate in (root / SCHEMA_IN_TREE, repo / SCHEMA_IN_TREE):
        candidate = candidate.resolve()
        if candidate.is_file() and candidate.is_relative_to(repo):
            return os.path.relpath(candidate, cluster_dir.resolve()).replace(os.sep, "/"), None
    target = root.resolve() / SCHEMA_IN_TREE
    return os.path.relpath(target, cluster_dir.resolve()).replace(os.sep, "/"), target


def cluster_yaml(req: InitRequest, inherits: str | None, base: dict[str, Any], schema: str) -> str:
    """The commented cluster file."""
    lines = [
        f"# yaml-language-server: $schema={schema}",
        f"# Cluster {req.name}: written by `cozy-render init`; edit freely (docs/overlay-reference.md).",
        "apiVersion: render.cozystack.io/v1alpha1",
        "kind: ClusterOverlay",
        "metadata:",
        f"  name: {req.name}            # must equal the folder name",
    ]
    if inherits:
        lines.append(f"inherits: [{inherits}]   # shared values; this file wins where both set a key")
    base_vars = base.get("vars") or {}
    lines += ["vars:", f"  domain: {req.name}.example.org   # read by the base's {{{{ vars.domain }}}} templates"] \
        if "domain" not in base_vars else []
    lines += ["host:", f"  os: {req.os}"]
    if req.os == "apt" and req.gpu in ("default", "vgpu"):
        lines.append("  nvidiaDriver: false          # passthrough and vGPU need the host driver purged (GPU-04)")
    if req.os == "apt" and req.gpu == "container":
        lines.append("  nvidiaDriver: true           # the GPU operator uses the host's driver")
        lines.append("  nvidiaContainerRuntime: true # nvidia-ctk runtime configure --runtime=containerd (GPU-10)")
    if req.gpu == "vgpu":
        lines.append("  gpuModel: A100               # mdev vs SR-IOV vGPU is decided by the model (GPU-13)")
    if req.os == "talos" and "talosVersion" not in (base.get("host") or {}):
        lines.append("  talosVersion: v1.13.6        # the Talos version of the nodes")
    platform_variant = (base.get("platform") or {}).get("variant")
    want = "isp-full" if req.os == "talos" else platform_variant or "isp-full-generic"
    platform_lines = []
    if platform_variant != want or not inherits:
        platform_lines.append(f"  variant: {want}   # isp-full on Talos, isp-full-generic on kubeadm/k3s hosts")
    if not (base.get("platform") or {}).get("version"):
        # The chart version the rules and features judge the cluster by, written out so that a new
        # default in a later cozy-render does not silently change what this cluster is checked against.
        platform_lines.append(f"  version: {DEFAULT_VERSION}   # the Cozystack platform chart it runs "
                              "(cozy-render platforms)")
    if platform_lines:
        lines += ["platform:", *platform_lines]
    if req.gpu != "none":
        lines += ["gpu:", f"  variant: {req.gpu}   # {_GPU_NOTES[req.os, req.gpu]}"]
    if req.gpu == "vgpu":
        lines += [
            "  vgpuManager:                 # the licensed NVIDIA vGPU manager image, from your registry (GPU-11)",
            "    repository: registry.example.com/nvidia",
            "    image: vgpu-manager",
            '    version: "595.58.02-ubuntu24.04"',
            "    imagePullSecrets: [nvidia-registry-secret]",
            "  vgpuDeviceManager:",
            "    enabled: true",
        ]
    if req.hubble:
        lines += ["hubble:", "  enabled: true                # a patch on cozystack.networking (docs/how-to/hubble.md)"]
    if req.vlans:
        lines += ["vlans:                         # `cozy-render node-config` writes the node bridges"]
        for raw in req.vlans:
            vlan_id, uplink, namespaces = parse_vlan(raw)
            lines += [f"  - name: vlan{vlan_id}", f"    id: {vlan_id}", f"    uplink: {uplink}",
                      f"    bridge: br{vlan_id}", f"    namespaces: [{', '.join(namespaces)}]"]
    return "\n".join(lines) + "\n"


_GPU_NOTES = {
    ("apt", "default"): "whole GPUs passed through to KubeVirt VMs (the platform's iaas bundle)",
    ("apt", "vgpu"): "NVIDIA vGPU slices for VMs (the platform's iaas bundle)",
    ("apt", "container"): "GPUs for pods: a standalone cozystack.gpu-operator Package",
    ("talos", "default"): "whole GPUs passed through to KubeVirt VMs (the platform's iaas bundle)",
    ("talos", "container"): "GPUs for pods: the Talos native overlay (NVIDIA system extension)",
}


def run(req: InitRequest) -> int:
    if not _NAME.match(req.name):
        raise _usage(f"cluster name {req.name!r} must be a DNS label (lower-case letters, digits, '-')")
    if req.os == "talos" and req.gpu == "vgpu":
        raise _usage("vGPU is not supported on Talos (GPU-05: the vGPU manager needs a host driver build); "
                      "use --gpu default (passthrough) or --gpu container")
    for raw in req.vlans:
        parse_vlan(raw)
    root = tree_root(req.root)
    target = root / "clusters" / req.name / "cluster.yaml"
    if os.path.lexists(target):
        raise _refuse(f"{quote(display_path(target))} already exists; init never overwrites", display_path(target))
    _refuse_links_out(root, target)
    base_file, base = find_base(root, req.os)
    inherits = os.path.relpath(base_file, target.parent).replace(os.sep, "/") if base_file else None
    schema, schema_file = schema_reference(root, target.parent)
    text = cluster_yaml(req, inherits, base, schema)
    if schema_file is not None:
        _refuse_links_out(root, schema_file)  # before anything is written: a refusal leaves the tree as it was
    _create(target, text)
    sys.stderr.write(f"wrote {quote(display_path(target))}" + (f" (inherits {quote(inherits)})" if inherits else "")
                     + "\n")
    if schema_file is not None:
        _refuse_links_out(root, schema_file)  # .cozy/ must not lead out of the tree either
        schema_file.parent.mkdir(exist_ok=True)
        schema_file.write_bytes(LAYER_SCHEMA_FILE.read_bytes())
        sys.stderr.write(f"wrote {quote(display_path(schema_file))} (the editor schema the modeline names; commit it, "
                         "refresh with cozy-render schema overlay --layer)\n")
    checked = run_pipeline(target.parent, Options(root=req.root, refuse=False))
    result = checked.one()  # an input the loader refuses is refused here, as render refuses it
    errors = [f for f in result.findings if f.severity == ERROR]
    warnings = [f for f in result.findings if f.severity == WARNING]

    report.write(result.findings)
    if checked.exit_code != EXIT_OK:
        sys.stderr.write(f"check found {len(errors)} error(s) in the new cluster; fix them before committing\n")
        return checked.exit_code
    sys.stderr.write(f"renders {len(result.objects)} objects, check passes ({len(warnings)} warnings); next: "
                     f"cozy-render render {quote(display_path(target.parent))}\n")
    return EXIT_OK
