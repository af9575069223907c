"""Generated code and data; do not edit. Every file here is written by `python -m renderer.generate`,
and `python -m renderer.generate --check` (run by CI) fails when one is stale:

- overlay_validator.py: fastjsonschema code for renderer/data/overlay.schema.json (full and per layer);
- schema_validators/: fastjsonschema code per output kind (renderer/schemas/data);
- variants.json: the shipped variants/*.yaml, parsed (a render reads it instead of parsing YAML).
"""
