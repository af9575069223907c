"""Generated validator modules (`python -m renderer.schemas.build`); imported one per kind present."""
