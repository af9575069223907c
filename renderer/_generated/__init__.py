"""generated; regenerate with `python -m renderer.generate`"""
