"""``node-config`` (node bridge files for ``vlans:``) and ``vm-snippet`` (vm-instance values per VLAN).

Both render the cluster first, with every rule, so a refused overlay (NET-10, NET-11, a VLAN
conflict, ...) never yields node files or snippets. Node files are host configuration: they go to
their own directory, never into the manifest stream or a ``render --out`` directory.
"""

from __future__ import annotations

import sys

from renderer import output
from renderer.commands.common import rendered
from renderer.errors import EXIT_FINDINGS, EXIT_OK, Finding, Location, RenderError
from renderer.escape import printable
from renderer.output import nodeconfig
from renderer.output.nodeconfig import vm_snippets
from renderer.pipeline import Options
from renderer.requests import NodeConfigRequest, VmSnippetRequest


def node_config(req: NodeConfigRequest) -> int:
    results = rendered(req.path, req.all_clusters, Options(req.variants, req.root), relevant=_about_vlans)
    files: dict[str, str] = {}
    for r in results:
        files.update(nodeconfig.cluster_files(r.overlay))
    if not files:
        sys.stderr.write("node-config: no vlans: in the rendered cluster(s); nothing to write\n")
    if req.out is None:
        sys.stdout.write("".join(f"# ==> {rel} <==\n{text}" for rel, text in files.items()))
        return EXIT_OK
    if req.check_only:
        stale = output.stale_files(req.out, files)
        for line in stale:
            sys.stderr.write(f"{printable(line)} (re-run cozy-render node-config --out)\n")
        return EXIT_FINDINGS if stale else EXIT_OK
    out = req.out
    manifests = [p for p in (out / output.KUSTOMIZATION, *out.glob(f"*/{output.KUSTOMIZATION}")) if p.is_file()]
    if manifests:
        # --out replaces DIR wholesale; a render --out folder here would be wiped, and node files
        # inside a folder Flux applies would be applied as (invalid) manifests.
        raise RenderError([Finding("OUT-NODECONFIG", f"{out} holds rendered manifests ({manifests[0]}); "
                                                     "write node config to its own directory", Location(str(out)))])
    output.write_tree(out, files, results)
    return EXIT_OK


def _about_vlans(finding: Finding) -> bool:
    """The warnings node files depend on: the VLAN rules (NET-*) and contradictions (VLAN-*); the rest of
    the render (GPU, Packages, ...) is check's to report (issue 23)."""
    return finding.code.startswith(("NET-", "VLAN-"))


def vm_snippet(req: VmSnippetRequest) -> int:
    (result,) = rendered(req.path, False, Options(req.variants, req.root))
    text = vm_snippets(result.overlay)
    if not text:
        sys.stderr.write(f"vm-snippet: cluster {result.overlay.name} has no vlans:\n")
    sys.stdout.write(text)
    return EXIT_OK
