"""``cozy-render rules-doc``: print the rules reference page (docs/rules.md) from the registry."""

from __future__ import annotations

import click


@click.command("rules-doc")
@click.option("--debug", is_flag=True, help="Show a traceback on internal errors.")
def rules_doc(debug: bool) -> None:
    """Print docs/rules.md, generated from the rule registry (cozy-render rules-doc > docs/rules.md)."""
    from renderer.cli import guarded

    guarded(_print_rules_doc)(debug=debug)


def _print_rules_doc() -> int:
    from renderer.errors import EXIT_OK
    from renderer.rules import all_rules
    from renderer.rules.docs import markdown

    click.echo(markdown(all_rules()), nl=False)
    return EXIT_OK
