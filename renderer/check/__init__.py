"""Stage 4, check: the output schemas (`schemas/`) and the reference rules (`rules/`)."""
