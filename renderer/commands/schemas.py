"""``cozy-render schemas export DIR``: our output schemas in kubeconform's directory layouts."""

from __future__ import annotations

from pathlib import Path

import click


def _versions(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    from renderer.schemas.catalog import DEFAULT_KUBERNETES_VERSION, normalize_kubernetes_version

    if not values:
        return ["master", DEFAULT_KUBERNETES_VERSION]
    out = []
    for value in values:
        if value == "master":
            out.append(value)
            continue
        try:
            out.append(normalize_kubernetes_version(value))
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx, param) from None
    return list(dict.fromkeys(out))


@click.group("schemas")
def schemas() -> None:
    """Output schemas used to validate rendered objects (kubeconform-compatible)."""


@schemas.command("export")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-k", "--kubernetes-version", "versions", multiple=True, callback=_versions,
              help="Write the default-registry layout for this version (repeatable; `master` allowed). "
                   "Default: master and the default Kubernetes version.")
@click.option("--core", is_flag=True,
              help="Also write our core-kind schemas (ConfigMap, DaemonSet, ...) for each version given (not master).")
@click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")
def export(directory: Path, versions: list[str], core: bool, debug: bool) -> None:
    """Write Package, PackageSource and NetworkAttachmentDefinition schemas under DIRECTORY.

    Two layouts: DIR/{group}/{kind}_{version}.json (CRDs-catalog) and
    DIR/<version>-standalone[-strict]/<kind>-<group>-<version>.json (kubeconform's default registry).
    """
    from renderer.app import execute

    execute(lambda: _export(directory, versions, core), debug, passthrough=(click.exceptions.ClickException,))


def _export(directory: Path, versions: list[str], core: bool) -> int:
    from renderer.errors import EXIT_OK, Finding, Location, RenderError
    from renderer.schemas.export import CATALOG_TEMPLATE, export

    try:
        written = export(directory, kubernetes_versions=versions, core=core)
    except OSError as exc:
        raise RenderError([Finding("SCHEMA", f"cannot write schemas: {exc.strerror}",
                                   Location(str(exc.filename or directory)))]) from None
    click.echo(f"wrote {len(written)} schema files under {directory}")
    click.echo("use with: kubeconform -schema-location default "
               f"-schema-location '{directory}/{CATALOG_TEMPLATE}' FILE...")
    return EXIT_OK
