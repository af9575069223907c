"""Generated validator modules (`python -m renderer.generate`); imported one per kind present."""
