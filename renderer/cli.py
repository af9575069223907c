"""The command line: a thin Click skin. Each command turns its arguments into a request
(``renderer.requests``) and hands it to a command body (``renderer.commands``) through the one runner
(``renderer.runner.execute``), which prints findings and picks the exit code.

Options several commands share are declared once, in ``SHARED``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from renderer import __version__
from renderer.formats import formats


def _kubernetes_version(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from renderer.check.schemas.catalog import normalize_kubernetes_version

    try:
        return normalize_kubernetes_version(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


SHARED: dict[str, Callable[[Any], Any]] = {
    "variants": click.option("--variants", "variants", type=click.Path(file_okay=False, path_type=Path),
                             help="Extra variants folder; its files override the shipped ones."),
    "root": click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                         help="Overlay repository root (default: nearest .git, or the folder above clusters/)."),
    "strict": click.option("--strict", is_flag=True, help="Treat warnings as errors."),
    "kubernetes_version": click.option("--kubernetes-version", "-k", "kubernetes_version",
                                       callback=_kubernetes_version, metavar="MINOR",
                                       help="Kubernetes version whose schemas validate core kinds (default 1.33)."),
    "validator": click.option("--validator", type=click.Choice(["auto", "builtin", "kubeconform"]), default="auto",
                              show_default=True,
                              help="Output schema validator: kubeconform from PATH, built-in, or auto."),
    "all_clusters": click.option("--all", "all_clusters", is_flag=True,
                                 help="PATH is an overlay tree: every clusters/*/cluster.yaml."),
    "path": click.argument("path", type=click.Path(exists=True, path_type=Path),
                           shell_complete=lambda ctx, param, incomplete: _complete_clusters(incomplete)),
    "verbose": click.option("-v", "--verbose", is_flag=True,
                            help="With --all on a terminal: print every warning line, not one per distinct warning."),
    "chart": click.option("--chart", "chart", type=click.Choice(["model", "helm", "auto"]),
                          help="Who says what the platform chart renders: the built-in model (the default; "
                               "helm when --helm names a binary), the real chart through helm (fails without "
                               "one), or helm when PATH has one."),
    "jobs": click.option("--jobs", "-j", "jobs", type=click.IntRange(min=0), default=0, metavar="N",
                         help="With --all: worker processes (default 0: the cores available). Output and "
                              "findings are the same as with --jobs 1."),
    "helm": click.option("--helm", "helm", metavar="PATH",
                         help="The helm binary for --chart helm/auto (default: helm on PATH)."),
    "shard": click.option("--shard", "shard", metavar="K/N",
                          help="With --all: only shard K of N of the fleet (by a hash of each cluster's path), "
                               "for a CI matrix; `cozy-render merge` joins the shards' -o json reports."),
}


def _formats(*subjects: str) -> click.Choice:
    """``-o``'s choices: the formats registered for what the command prints (``renderer.formats``)."""
    return click.Choice(list(dict.fromkeys(fmt for subject in subjects for fmt in formats(subject))))


def _complete_clusters(incomplete: str) -> list[Any]:
    from renderer.commands.completion import cluster_folders

    return cluster_folders(incomplete)


def shared(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Apply the shared options ``names`` (in the order given, as they appear in --help)."""

    def apply(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in reversed(names):
            fn = SHARED[name](fn)
        return fn

    return apply


def runs(fn: Callable[..., int | None]) -> Callable[..., None]:
    """Add --debug and run the command body through the runner (findings, exit codes, no tracebacks)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from renderer.runner import execute

        debug = kwargs.pop("debug", False)
        execute(lambda: fn(*args, **kwargs), debug, passthrough=(click.exceptions.ClickException,))

    return click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")(wrapper)


def _needs_out(check_only: bool, out: Path | None) -> None:
    if check_only and out is None:
        raise click.UsageError("--check needs --out DIR")


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from renderer.commands.version import version_text

    click.echo(version_text(), nl=False)
    ctx.exit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help=f"Show the version ({__version__}) and the vendored platform chart versions, and exit.")
def main() -> None:
    """Render Cozystack Package CRs from per-cluster GitOps overlays."""


@main.command()
@shared("path")
@click.option("-o", "--output", "fmt", type=_formats("objects"), default=None,
              help="stdout format: a YAML stream (default) or a JSON v1 List (with --annotate: every value with "
                   "its provenance). Not with --out.")
@click.option("--annotate", is_flag=True,
              help="End each value's line with a `# file:line` comment naming where it came from.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write a kustomize directory (one file per object) instead of stdout; replaced atomically.")
@click.option("--all", "all_clusters", is_flag=True,
              help="PATH is an overlay tree: render every clusters/*/cluster.yaml (with --out: one folder each).")
@click.option("--check", "check_only", is_flag=True,
              help="With --out: write nothing, exit 1 if the folder is not what a render would write.")
@shared("variants", "root", "strict", "kubernetes_version", "validator", "verbose", "jobs", "shard", "chart", "helm")
@runs
def render(**options: Any) -> int:
    """Render the cluster at PATH (a cluster folder or its cluster.yaml)."""
    from renderer.commands import render as command
    from renderer.requests import RenderRequest

    _needs_out(options["check_only"], options["out"])
    if options["fmt"] is not None and options["out"] is not None and not options["check_only"] \
            and not (options["fmt"] == "json" and options["shard"] is not None):  # --check, --shard: -o json
        raise click.UsageError("-o/--output picks the stdout format; --out writes YAML files: use one of them")
    if options["annotate"] and options["out"] is not None:
        raise click.UsageError("--annotate prints a stream; it cannot be combined with --out")
    return command.run(RenderRequest(**{**options, "fmt": options["fmt"] or "yaml"}))


@main.command()
@shared("path")
@click.option("-o", "--output", "fmt", type=_formats("findings"), default="text",
              show_default=True,
              help="text: file:line:col lines on stderr; json: findings on stdout; github: workflow annotations.")
@click.option("--all", "all_clusters", is_flag=True, help="PATH is an overlay tree: check every cluster.")
@shared("variants", "root", "strict", "kubernetes_version", "validator", "verbose", "chart", "helm", "jobs",
        "shard")
@runs
def check(**options: Any) -> int:
    """Render, validate output schemas and run every rule; report findings (exit 1 on errors,
    or on warnings with --strict)."""
    from renderer.commands import check as command
    from renderer.requests import CheckRequest

    return command.run(CheckRequest(**options))


@main.command()
@shared("path")
@click.argument("key", required=False)
@click.argument("pointer", required=False)
@click.option("--rendered", is_flag=True,
              help="Explain the rendered output: KEY is KIND/NAME (or KIND/NAMESPACE/NAME), POINTER a JSON pointer.")
@click.option("-o", "--output", "fmt", type=_formats("explain", "explain-rendered"), default="text",
              show_default=True, help="Output format.")
@shared("variants", "root")
@runs
def explain(**options: Any) -> int:
    """Show which file and line set each overlay value (or only KEY, dotted: gpu.variant).

    With --rendered, show for each value of the rendered output (or of one object, or the one at a
    JSON pointer) its chain: the overlay layers that set it, or the feature, variant data line and
    overlay value that derived it.
    """
    from renderer.commands import explain as command
    from renderer.requests import ExplainRequest

    if options["pointer"] is not None and not options["rendered"]:
        raise click.UsageError("POINTER needs --rendered (without it, KEY is a dotted overlay key: gpu.variant)")

    return command.run(ExplainRequest(**options))


@main.command()
@click.argument("code", required=False, shell_complete=lambda ctx, param, incomplete: _complete_codes(incomplete))
@click.option("-o", "--output", "fmt", type=_formats("rules"), default="text", show_default=True,
              help="Output format (json: id, severity, family, summary, explanation, sources).")
@runs
def rules(code: str | None, fmt: str) -> int:
    """List every rule and code, or explain one (cozy-render rules GPU-05, cozy-render rules OVL-YAML)."""
    from renderer.commands import rules as command
    from renderer.requests import RulesRequest

    return command.run(RulesRequest(code, fmt))


def _complete_codes(incomplete: str) -> list[Any]:
    from renderer.commands.completion import rule_ids

    return rule_ids(incomplete)


@main.command("rules-doc")
@runs
def rules_doc() -> int:
    """Print docs/rules.md, generated from the registry (python -m renderer.generate writes it)."""
    from renderer.commands import rules as command

    return command.run_doc()


@main.group()
def schema() -> None:
    """JSON Schemas: the overlay contract (for editors) and the output schemas (for kubeconform)."""


@schema.command("overlay")
@click.option("--layer", is_flag=True,
              help="The schema of one layer file (what a base or a cluster file may hold; nothing required), "
                   "for editors. Without it: the merged overlay's schema.")
@runs
def schema_overlay(layer: bool) -> int:
    """The ClusterOverlay JSON Schema: of the merged overlay, or (--layer) of any one file."""
    from renderer.commands import schemas as command

    return command.overlay_schema(layer)


def _output_name(_ctx: click.Context, param: click.Parameter, value: str) -> str:
    """NAME is one of the shipped schemas (read when the command runs, not when the CLI loads)."""
    from renderer.commands.schemas import OUTPUTS

    if value not in OUTPUTS:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(map(repr, OUTPUTS))}.", param=param)
    return value


def _complete_outputs(incomplete: str) -> list[Any]:
    from renderer.commands.schemas import OUTPUTS

    return [n for n in OUTPUTS if n.startswith(incomplete)]


@schema.command("output")
@click.argument("name", callback=_output_name,
                shell_complete=lambda ctx, param, incomplete: _complete_outputs(incomplete))
@runs
def schema_output(name: str) -> int:
    """The JSON Schema of NAME's -o json output (NAME: the command; versioned by its apiVersion;
    CHANGELOG.md)."""
    from renderer.commands import schemas as command

    return command.output_schema(name)


def _schema_versions(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    from renderer.check.schemas.catalog import DEFAULT_KUBERNETES_VERSION, normalize_kubernetes_version

    if not values:
        return ("master", DEFAULT_KUBERNETES_VERSION)
    out = []
    for value in values:
        try:
            out.append(value if value == "master" else normalize_kubernetes_version(value))
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx, param) from None
    return tuple(dict.fromkeys(out))


@schema.command("export")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-k", "--kubernetes-version", "versions", multiple=True, callback=_schema_versions,
              help="Write the default-registry layout for this version (repeatable; `master` allowed). "
                   "Default: master and the default Kubernetes version.")
@click.option("--core", is_flag=True,
              help="Also write our core-kind schemas (ConfigMap, DaemonSet, ...) for each version given (not master).")
@runs
def schemas_export(**options: Any) -> int:
    """Write Package, PackageSource and NetworkAttachmentDefinition schemas under DIRECTORY.

    Two layouts: DIR/{group}/{kind}_{version}.json (CRDs-catalog) and
    DIR/<version>-standalone[-strict]/<kind>-<group>-<version>.json (kubeconform's default registry).
    """
    from renderer.commands import schemas as command
    from renderer.requests import SchemasExportRequest

    return command.export(SchemasExportRequest(**options))


@main.group(hidden=True)
def schemas() -> None:
    """Old spelling of `schema` (output schemas); kept for one release."""


schemas.add_command(schemas_export, "export")


@main.command("node-config")
@shared("path")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write <cluster>/netplan/... or <cluster>/talos/... under DIR (replaced atomically) "
                   "instead of printing. Keep DIR outside any folder Flux or Argo CD applies.")
@shared("all_clusters")
@click.option("--check", "check_only", is_flag=True,
              help="With --out: write nothing, exit 1 if DIR is not what node-config would write.")
@shared("variants", "root")
@runs
def node_config(**options: Any) -> int:
    """Node bridge config for the cluster's vlans: netplan (host.os apt) or a Talos machine-config patch."""
    from renderer.commands import nodeconfig as command
    from renderer.requests import NodeConfigRequest

    _needs_out(options["check_only"], options["out"])
    return command.node_config(NodeConfigRequest(**options))


@main.command("vm-snippet")
@shared("path", "variants", "root")
@runs
def vm_snippet(**options: Any) -> int:
    """Print the vm-instance `networks:` values that attach a VM to each of the cluster's VLANs."""
    from renderer.commands import nodeconfig as command
    from renderer.requests import VmSnippetRequest

    return command.vm_snippet(VmSnippetRequest(**options))


@main.group("cmp")
def cmp() -> None:
    """Argo CD Config Management Plugin commands (run by argocd-cmp-server)."""


@cmp.command("generate")
@click.option("--path", "path", default=".", type=click.Path(exists=True, path_type=Path),
              help="Cluster folder (default: the working directory Argo CD sets).")
@runs
def cmp_generate(path: Path) -> int:
    """Print the Application's manifests to stdout (YAML stream)."""
    from renderer.commands import cmp as command
    from renderer.requests import CmpGenerateRequest

    return command.generate(CmpGenerateRequest.from_environment(path))


@main.group("daemon")
def daemon() -> None:
    """The resident renderer for the Argo CD sidecar (README "Argo CD")."""


@daemon.command("serve")
@click.option("--socket", "socket_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Unix socket to listen on; its folder is created 0700. cmp generate finds it through "
                   "COZY_RENDER_DAEMON_SOCKET.")
@click.option("--deadline", type=click.FloatRange(min=0, min_open=True), default=300.0, show_default=True,
              help="Seconds one request may run before its worker is killed.")
@click.option("-v", "--verbose", is_flag=True, help="Log every request's worker, exit code and time on stderr.")
@runs
def daemon_serve(socket_path: Path, deadline: float, verbose: bool) -> int:
    """Stay warm and serve cmp generate: one forked worker per request, the same bytes as in-process."""
    from renderer.commands import daemon as command

    entry = click.get_current_context().find_root().obj  # renderer.entry hands its main down (no cycle)
    return command.serve(socket_path, deadline, verbose, getattr(entry, "run_cli", None))


@cmp.command("parameters")
@runs
def cmp_parameters() -> int:
    """Print the parameter announcement (JSON) for plugin.yaml parameters.dynamic."""
    from renderer.commands import cmp as command

    return command.parameters()


@main.command()
@shared("path")
@click.option("--all", "all_clusters", is_flag=True,
              help="PATH is an overlay tree: diff every cluster, each against its own context.")
@click.option("--snapshot", type=click.Path(exists=True, path_type=Path),
              help="Live state from `kubectl get -o yaml|json` output (a file or a folder) instead of a cluster.")
@click.option("--against", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Compare with a committed `render --out` folder instead of a cluster.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path),
              help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, or the in-cluster service account).")
@click.option("--context", help="kubeconfig context (default: live.context, the cluster's name, or the current one).")
@click.option("--server-side", is_flag=True,
              help="Compare with a server-side-apply dry run of each object (defaults and webhooks applied).")
@click.option("--field-manager", help="Field manager for --server-side (default: cozy-render).")
@click.option("--ignore", "ignore", multiple=True, metavar="[KIND[/NS]/NAME:]POINTER",
              help="Never report this JSON pointer (repeatable); adds to the overlay's diff.ignore.")
@click.option("--show-secrets", is_flag=True, help="Show Secret values instead of *** masks.")
@click.option("-o", "--output", type=_formats("diff", "review"),
              help="Output format (default: text); markdown, a pull-request comment, needs --base.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]),
              help="Colour the diff (default auto: on a terminal, unless NO_COLOR is set).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 when there are differences (errors still exit >1).")
@click.option("--base", metavar="REV",
              help="Review a change: compare the render at Git revision REV with --head instead of a live cluster.")
@click.option("--head", metavar="REV", help="With --base: the revision under review (default: the working tree).")
@click.option("--fail-on-new-errors", is_flag=True,
              help="With --base: exit 1 only when the change introduces error findings.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              help="One deadline in seconds for the whole command from its start: the render, every cluster, "
                   "request and retry (default: 60).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Clusters diffed at once with --all (default: 4).")
@click.option("--delivery", type=click.Choice(["argocd", "flux"]),
              help="What the cluster receives: argocd (cmp generate's output, the default) or flux (render --out's, "
                   "with its kustomize.toolkit.fluxcd.io/substitute: disabled mark).")
@click.option("--effective", is_flag=True,
              help="Compare the effective Package set (the platform chart's Packages too, rendered by helm) with "
                   "the live Packages: hand edits of platform Packages and keep-policy leftovers show.")
@click.option("--helm", metavar="PATH",
              help="With --effective, or --base and --chart helm/auto: the helm binary (default: helm on PATH).")
@click.option("--platform-chart", type=click.Path(file_okay=False, path_type=Path),
              help="With --effective or --base: a platform chart folder instead of the vendored one of "
                   "platform.version.")
@click.option("--chart", "chart", type=click.Choice(["model", "helm", "auto"]),
              help="With --base: who says what the platform chart renders, as for check (default: model, "
                   "never helm; helm: the real chart, fails without one; auto: helm when --helm or PATH has one).")
@shared("variants", "root", "kubernetes_version", "shard")
@runs
def diff(**options: Any) -> int:
    """Show what syncing the render of PATH would change on the live cluster, or with --base what a change
    between two Git revisions changes (exit 0 none, 1 differences, >1 error)."""
    from renderer.diff import DiffRequest, run

    base, head, fail_on_new_errors = options.pop("base"), options.pop("head"), options.pop("fail_on_new_errors")
    chart = options.pop("chart")
    shard = options.pop("shard")
    if shard is not None and base is None:
        from renderer.errors import EXIT_USAGE, Finding, RenderError

        raise RenderError([Finding("CLI-SHARD", "--shard splits the review of a fleet: give --base REV --all")],
                          EXIT_USAGE)
    if base is not None or head is not None or fail_on_new_errors:
        from renderer import preview

        return preview.run_options(base, head, fail_on_new_errors, {**options, "chart": chart, "shard": shard})
    if chart is not None:
        raise click.UsageError("--chart judges the platform chart in a review: give --base REV")
    if options.get("output") == "markdown":
        raise click.UsageError("-o markdown is the pull-request comment of a review: give --base REV")
    # Unset options take DiffRequest's defaults: they are declared there only.
    return run(DiffRequest(**{k: v for k, v in options.items() if v is not None}))


@main.command()
@shared("path", "all_clusters")
@click.option("-o", "--output", "fmt", type=_formats("inputs"), default="text", show_default=True,
              help="text: one path per line (with --all: cluster<TAB>path); json: {clusters: [...]}.")
@shared("variants", "root")
@runs
def inputs(**options: Any) -> int:
    """Every repository file the render of PATH reads, relative to the repository root (for Argo CD's
    manifest-generate-paths)."""
    from renderer.commands import inputs as command
    from renderer.requests import InputsRequest

    return command.run(InputsRequest(**options))


@main.command("ls")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path),
                shell_complete=lambda ctx, param, incomplete: _complete_clusters(incomplete))
@click.option("-o", "--output", "fmt", type=_formats("clusters"), default="table", show_default=True,
              help="A table, or JSON (the same in a pipe and on a terminal).")
@click.option("--sort", type=click.Choice(["name", "os", "platform", "version", "gpu", "hubble", "vlans", "errors",
                                           "warnings"]), default="name", show_default=True,
              help="Column to sort by (counts sort largest first).")
@click.option("--errors", "errors_only", is_flag=True,
              help="Only clusters with errors (exit 1 when there are any).")
@shared("variants", "root", "jobs", "shard")
@runs
def ls(**options: Any) -> int:
    """One row per cluster of the overlay tree at PATH: host OS, platform variant and version, GPU
    route, Hubble mode, VLAN count, and error and warning counts from the rules."""
    from renderer.commands import ls as command
    from renderer.requests import LsRequest

    return command.run(LsRequest(**options))


@main.command()
@click.argument("reports", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "table", "json", "github", "markdown"]),
              help="Any format the sharded command prints (default: its own default).")
@runs
def merge(**options: Any) -> int:
    """Join the -o json reports of a run's shards (--shard 1/N ... N/N) into the report one run over the
    whole fleet prints, with its exit code."""
    from renderer.commands import merge as command
    from renderer.requests import MergeRequest

    return command.run(MergeRequest(**options))


@main.command()
@click.argument("name", required=False)
@click.option("--os", "host_os", type=click.Choice(["apt", "talos"]),
              help="Host OS of the nodes: apt (Ubuntu/Debian) or talos.")
@click.option("--gpu", type=click.Choice(["none", "default", "vgpu", "container"]),
              help="GPU route: none, default (passthrough to VMs), vgpu (apt only), container (pods).  [default: none]")
@click.option("--hubble", is_flag=True, help="Turn Hubble on (a patch on cozystack.networking).")
@click.option("--vlan", "vlans", multiple=True, metavar="ID:UPLINK:NS[,NS...]",
              help="An external VLAN for VMs in namespaces NS (repeatable), e.g. 100:eno2:tenant-example.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path),
              help="Overlay tree to write into (default: the working directory's tree).")
@runs
def init(name: str | None, host_os: str | None, gpu: str | None, hubble: bool, vlans: tuple[str, ...],
         root: Path | None) -> int:
    """Write a commented clusters/NAME/cluster.yaml that inherits the tree's bases, then render and
    check it. Never overwrites. With no options on a terminal, asks."""
    from renderer.commands import init as command
    from renderer.requests import InitRequest

    asked = host_os is None and gpu is None and not hubble and not vlans
    if asked and _stdin_is_terminal():
        name = name or click.prompt("Cluster name")
        host_os = click.prompt("Host OS", type=click.Choice(["apt", "talos"]), default="apt")
        gpus = ["none", "default", "container"] + (["vgpu"] if host_os == "apt" else [])
        gpu = click.prompt("GPU route", type=click.Choice(gpus), default="none")
        hubble = click.confirm("Hubble", default=False)
        while True:
            vlan = click.prompt("VLAN ID:UPLINK:NS (empty: done)", default="", show_default=False)
            if not vlan:
                break
            vlans += (vlan,)
    if name is None:
        raise click.UsageError("NAME is required (or run init on a terminal with no options to be asked)")
    if host_os is None:
        raise click.UsageError("--os apt|talos is required (or run init on a terminal with no options to be asked)")
    return command.run(InitRequest(name, host_os, gpu or "none", hubble, vlans, root))


def _stdin_is_terminal() -> bool:
    import sys

    return sys.stdin.isatty()


@main.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@runs
def completion(shell: str) -> int:
    """Print the shell completion script for SHELL (commands, options, rule IDs, cluster folders)."""
    import sys

    from renderer.commands.completion import script

    sys.stdout.write(script(shell, main))  # through the runner: a closed stdout is handled as for every command
    return 0


# The examples every command's --help ends with (tests/commands/test_cli_help.py checks that each has some).
DAEMON_EXAMPLE = ('cozy-render daemon serve --socket "$HOME/run/daemon.sock" & sleep 2; '
                  'cd overlays/clusters/vgpu-apt-01 && COZY_RENDER_DAEMON_SOCKET="$HOME/run/daemon.sock" '
                  'cozy-render cmp generate; kill $!')
EXAMPLES: dict[str, list[str]] = {
    # Written to run from the repository root, where the README runs (the samples sit in overlays/).
    "render": ["cozy-render render overlays/clusters/vgpu-apt-01",
               "cozy-render render overlays --all --out rendered/"],
    "check": ["cozy-render check overlays --all -o github", "cozy-render check overlays --all --chart helm"],
    "explain": ["cozy-render explain overlays/clusters/vgpu-apt-01 gpu.variant",
                "cozy-render explain overlays/clusters/vgpu-apt-01 --rendered Package/cozystack.cozystack-platform "
                "/spec/components/platform/values/bundles/iaas/gpuOperatorVariant"],
    "rules": ["cozy-render rules", "cozy-render rules GPU-05"],
    "rules-doc": ["cozy-render rules-doc > docs/rules.md"],
    # schema export writes a folder of its own (never the repository's committed schemas/, which it refuses)
    "schema": ["cozy-render schema overlay --layer > overlay-layer.schema.json",
               "cozy-render schema export kubeconform-schemas/"],
    "schema overlay": ["cozy-render schema overlay --layer > overlay-layer.schema.json"],
    "schema export": ["cozy-render schema export kubeconform-schemas/ -k 1.33 --core"],
    "schema output": ["cozy-render schema output check > check.schema.json"],
    "schemas": ["cozy-render schema export kubeconform-schemas/"],
    "schemas export": ["cozy-render schema export kubeconform-schemas/"],
    "node-config": ["cozy-render node-config overlays/clusters/vlan-apt-01",
                    "cozy-render node-config overlays --all --out nodes/"],
    "vm-snippet": ["cozy-render vm-snippet overlays/clusters/vlan-apt-01"],
    "cmp": ["cd overlays/clusters/vgpu-apt-01 && cozy-render cmp generate"],
    "cmp generate": ["cd overlays/clusters/vgpu-apt-01 && ARGOCD_APP_PARAMETERS='[]' cozy-render cmp generate"],
    "cmp parameters": ["cozy-render cmp parameters"],
    # The daemon stops at the end (kill $!); without it, or before it listens, cmp generate renders in-process.
    "daemon": [DAEMON_EXAMPLE],
    "daemon serve": [DAEMON_EXAMPLE],
    "ls": ["cozy-render ls overlays", "cozy-render ls overlays --errors --sort warnings -o json"],
    "init": ["cozy-render init edge-01 --os apt --gpu container --hubble --root overlays",
             "cozy-render init lab-02 --os talos --vlan 100:eno2:tenant-example --root overlays"],
    # A trailing `# needs a cluster` (or `# exits N`) is read by tests/test_docs_examples.py, which runs the rest.
    "diff": ["cozy-render diff overlays/clusters/vgpu-apt-01 --context vgpu-apt-01-admin   # needs a cluster",
             "cozy-render diff --base origin/main --all overlays -o markdown"],
    "effective": ["cozy-render effective overlays/clusters/vgpu-apt-01 -o table",
                  "cozy-render effective overlays --all -o json"],
    "platforms": ["cozy-render platforms"],
    "inputs": ["cozy-render inputs overlays/clusters/vgpu-apt-01", "cozy-render inputs overlays --all -o json"],
    "merge": ["cozy-render check overlays --all --shard 1/2 -o json > s1.json && cozy-render check overlays --all "
              "--shard 2/2 -o json > s2.json && cozy-render merge s1.json s2.json -o github"],
    "completion": ['eval "$(cozy-render completion bash)"',
                   "cozy-render completion fish > ~/.config/fish/completions/cozy-render.fish"],
}


def _add_examples(group: click.Group, prefix: str = "") -> None:
    for name, command in group.commands.items():
        examples = EXAMPLES.get(prefix + name)
        if examples and not command.epilog:
            command.epilog = "\b\nExamples:\n" + "\n".join(f"  {e}" for e in examples)
        if isinstance(command, click.Group):
            _add_examples(command, f"{prefix}{name} ")


_add_examples(main)


# ---- the platform as it will really be (renderer.effective; issue 10) ----

@main.command()
@shared("path")
@click.option("-o", "--output", "fmt", type=_formats("effective", "effective-run"), default="yaml",
              show_default=True, help="yaml: the Packages as a stream; json: with origin and components; table.")
@click.option("--platform-chart", "platform_chart", type=click.Path(file_okay=False, path_type=Path),
              help="A copy of Cozystack's packages/core/platform/ to use instead of the vendored version.")
@shared("chart", "helm", "all_clusters", "jobs", "variants", "root")
@runs
def effective(**options: Any) -> int:
    """Every Package the cluster will have: the platform chart's (as --chart judges it), with cozy-render's
    own on top."""
    from renderer.commands.effective import EffectiveRequest, run

    return run(EffectiveRequest(**options))


@main.command()
@runs
def platforms() -> int:
    """List the vendored platform chart versions (platform.version) and the default."""
    from renderer.commands.effective import platforms as command

    return command()


_add_examples(main)  # EXAMPLES already names the two commands above


# ---- after the sync: does the GPU route work? (renderer.doctor; issue 22) ----

@main.command(epilog="\b\nExamples:\n  cozy-render doctor overlays/clusters/gpu-apt-01 --context gpu-apt-01-admin"
                     "   # needs a cluster\n  cozy-render doctor overlays --all -o json   # needs a cluster")
@shared("path", "all_clusters")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path),
              help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, or the in-cluster service account).")
@click.option("--context", help="kubeconfig context (default: live.context, the cluster's name, or the current one).")
@click.option("-o", "--output", type=_formats("doctor"), help="Output format (default: text).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              help="One deadline in seconds for the whole command from its start: the render, every cluster, "
                   "request and retry (default: 60).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Clusters read at once with --all (default: 4).")
@shared("variants", "root", "shard")
@runs
def doctor(**options: Any) -> int:
    """Check the GPU route of PATH on the live cluster (read-only): name each documented failure, its
    node and its fix (exit 0 healthy, 1 a documented failure, >1 the cluster cannot be read)."""
    from renderer.commands import doctor as command
    from renderer.requests import DoctorRequest

    return command.run(DoctorRequest(**{k: v for k, v in options.items() if v is not None}))


if __name__ == "__main__":  # pragma: no cover
    main()
