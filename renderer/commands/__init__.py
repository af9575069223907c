"""Commands that live in their own modules; ``renderer.cli`` adds every command in ``ALL``.

Modules here import only click at top level; the work they call is imported inside the command.
"""

from __future__ import annotations

import click

ALL: list[click.Command] = []

from renderer.commands.nodeconfig import node_config, vm_snippet  # noqa: E402 - needs ALL defined first

ALL += [node_config, vm_snippet]

from renderer.commands.rules_doc import rules_doc  # noqa: E402

ALL.append(rules_doc)

from renderer.commands.schemas import schemas  # noqa: E402

ALL.append(schemas)
