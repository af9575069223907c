"""Regenerate every generated artefact, or check that none is stale (CI runs ``--check``).

    python -m renderer.generate           # write what changed
    python -m renderer.generate --check   # write nothing; exit 1 naming each stale file

Artefacts: the variants bundle (``renderer/_generated/variants.json`` from ``variants/``), everything
built from the overlay's one definition (``renderer.load.overlay_schema.DEFINITION``): the loader's
validator ``renderer/_generated/overlay_validator.py``, the merged and layer schemas
(``renderer/data/overlay*.schema.json`` and their stable copies in ``schemas/``) and the overlay
reference page ``docs/overlay-reference.md``; the platform chart catalogues
(``renderer/_generated/platform/<version>.json`` from the vendored charts), the output-schema data and validators
(``renderer/check/schemas/data/crd-schemas/``,
``renderer/_generated/schema_validators/``; ``python -m renderer.check.schemas.build --kubernetes-validate
WHEEL`` also re-imports the core kinds), the rules page ``docs/rules.md``, and the tables of the start-up
budget page ``docs/startup-budget.md`` (from ``renderer.startup_budget``; its prose and figures are written by
hand).

A maintainer tool for a source checkout: installed, it refuses in one line and writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from renderer import docs_reference, startup_budget
from renderer.check.rules import docs as rules_docs
from renderer.check.schemas import build as schemas_build
from renderer.commands.schemas import OUTPUT_SCHEMAS
from renderer.generated_files import CHECKOUT, Files, Owned, refusal, stale_files, write_files
from renderer.load import overlay_schema, variants
from renderer.platform_chart import catalogue

RULES_PAGE = CHECKOUT / "docs" / "rules.md"
BUDGET_PAGE = CHECKOUT / "docs" / "startup-budget.md"


def _variants() -> tuple[Files, Owned]:
    return {variants.BUNDLE: variants.bundle_source().encode()}, ()


def _overlay_validator() -> tuple[Files, Owned]:
    return {overlay_schema.GENERATED: overlay_schema.generated_source().encode()}, ()


def _overlay_schemas() -> tuple[Files, Owned]:
    return overlay_schema.expected_files(), ()


def _overlay_reference() -> tuple[Files, Owned]:
    return {docs_reference.REFERENCE_PAGE: docs_reference.markdown().encode()}, ()


def _published_output_schemas() -> tuple[Files, Owned]:
    """The JSON outputs' schemas (hand-written, shipped in renderer/data/output-schemas/) at the stable
    repository path schemas/output/."""
    published = overlay_schema.PUBLISHED / "output"
    return ({published / p.name: p.read_bytes() for p in sorted(OUTPUT_SCHEMAS.glob("*.schema.json"))},
            ((published, "*.json"),))


def _output_schemas() -> tuple[Files, Owned]:
    return schemas_build.expected_files(), schemas_build.OWNED


def _platform_catalogues() -> tuple[Files, Owned]:
    return catalogue.expected_files(), ((catalogue.GENERATED, "*.json"),)


def _rules_page() -> tuple[Files, Owned]:
    return {RULES_PAGE: rules_docs.markdown().encode()}, ()


def _budget_page() -> tuple[Files, Owned]:
    """Only the page's tables are generated; a tree without the page has none to fill."""
    if not BUDGET_PAGE.exists():
        return {}, ()
    return {BUDGET_PAGE: startup_budget.render_page(BUDGET_PAGE.read_text(encoding="utf-8")).encode()}, ()


# In order: the overlay schemas read the platform chart catalogues (their enums).
GENERATORS: dict[str, Callable[[], tuple[Files, Owned]]] = {
    "variants bundle": _variants,
    "platform chart catalogues": _platform_catalogues,
    "overlay validator": _overlay_validator,
    "overlay schemas": _overlay_schemas,
    "overlay reference": _overlay_reference,
    "JSON output schemas": _published_output_schemas,
    "output schemas": _output_schemas,
    "rules page": _rules_page,
    "start-up budget page": _budget_page,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m renderer.generate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when an artefact is stale")
    args = parser.parse_args(argv)
    refused = refusal("python -m renderer.generate")
    if refused:
        print(refused, file=sys.stderr)
        return 2
    problems: list[str] = []
    for name, generator in GENERATORS.items():
        files, owned = generator()
        if args.check:
            problems += [f"{line} ({name})" for line in stale_files(files, owned)]
        else:
            for line in write_files(files, owned):
                print(f"wrote {line}")
    for line in problems:
        print(f"stale: {line}; run `python -m renderer.generate`", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
