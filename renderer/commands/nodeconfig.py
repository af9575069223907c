"""``node-config`` (node bridge files for ``vlans:``) and ``vm-snippet`` (vm-instance values per VLAN).

Both render the cluster first, with every rule, so a refused overlay (NET-10, NET-11, a VLAN
conflict, ...) never yields node files or snippets. Node files are host configuration: they go to
their own directory, never into the manifest stream or a ``render --out`` directory.
"""

from __future__ import annotations

from pathlib import Path

import click

_path_arg = click.argument("path", type=click.Path(exists=True, path_type=Path))
_variants_opt = click.option("--variants", "variants", type=click.Path(file_okay=False, path_type=Path),
                             help="Extra variants folder; its files override the shipped ones.")
_root_opt = click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                         help="Overlay repository root (default: nearest .git, or the folder above clusters/).")
_debug_opt = click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")


def _run(body, debug: bool) -> None:
    from renderer.app import execute

    execute(body, debug, passthrough=(click.exceptions.ClickException,))


@click.command("node-config")
@_path_arg
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write <cluster>/netplan/... or <cluster>/talos/... under DIR (replaced atomically) "
                   "instead of printing. Keep DIR outside any folder Flux or Argo CD applies.")
@click.option("--all", "all_clusters", is_flag=True, help="PATH is an overlay tree: every clusters/*/cluster.yaml.")
@click.option("--check", "check_only", is_flag=True,
              help="With --out: write nothing, exit 1 if DIR is not what node-config would write.")
@_variants_opt
@_root_opt
@_debug_opt
def node_config(path: Path, out: Path | None, all_clusters: bool, check_only: bool, variants: Path | None,
                root: Path | None, debug: bool) -> None:
    """Node bridge config for the cluster's vlans: netplan (host.os apt) or a Talos machine-config patch."""

    def body() -> int:
        import sys

        from renderer import nodeconfig, output
        from renderer.app import cluster_paths, render_clusters
        from renderer.errors import EXIT_FINDINGS, EXIT_OK, Finding, Location, RenderError

        if check_only and out is None:
            raise click.UsageError("--check needs --out DIR")
        results = render_clusters(cluster_paths(path, all_clusters), variants, root, strict=False)
        files: dict[str, str] = {}
        for r in results:
            files.update(nodeconfig.cluster_files(r.overlay))
        if not files:
            sys.stderr.write("node-config: no vlans: in the rendered cluster(s); nothing to write\n")
        if out is None:
            for rel, text in files.items():
                sys.stdout.write(f"# ==> {rel} <==\n{text}")
            return EXIT_OK
        if check_only:
            stale = output.stale_files(out, files)
            for line in stale:
                sys.stderr.write(f"{line} (re-run cozy-render node-config --out)\n")
            return EXIT_FINDINGS if stale else EXIT_OK
        manifests = [p for p in (out / output.KUSTOMIZATION, *out.glob(f"*/{output.KUSTOMIZATION}")) if p.is_file()]
        if manifests:
            # --out replaces DIR wholesale; a render --out folder here would be wiped, and node files
            # inside a folder Flux applies would be applied as (invalid) manifests.
            raise RenderError([Finding("NODECONFIG", f"{out} holds rendered manifests ({manifests[0]}); "
                                                     "write node config to its own directory", Location(str(out)))])
        output.write_tree(out, files)
        return EXIT_OK

    _run(body, debug)


@click.command("vm-snippet")
@_path_arg
@_variants_opt
@_root_opt
@_debug_opt
def vm_snippet(path: Path, variants: Path | None, root: Path | None, debug: bool) -> None:
    """Print the vm-instance `networks:` values that attach a VM to each of the cluster's VLANs."""

    def body() -> int:
        import sys

        from renderer.app import cluster_paths, render_clusters
        from renderer.errors import EXIT_OK
        from renderer.features.vlans import vm_snippets

        (result,) = render_clusters(cluster_paths(path, False), variants, root, strict=False)
        text = vm_snippets(result.overlay)
        if not text:
            sys.stderr.write(f"vm-snippet: cluster {result.overlay.name} has no vlans:\n")
        sys.stdout.write(text)
        return EXIT_OK

    _run(body, debug)
