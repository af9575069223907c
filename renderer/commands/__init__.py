"""Commands that live in their own modules; ``renderer.cli`` adds every command in ``ALL``.

Modules here import only click at top level; the work they call is imported inside the command.
"""

from __future__ import annotations

import click

ALL: list[click.Command] = []
