"""cozy-render: render Cozystack Package CRs from per-cluster GitOps overlays.

Importing the package is free of side effects and of heavy imports; the pipeline lives in
``renderer.pipeline`` and the command line in ``renderer.cli``.
"""

__version__ = "0.3.0"  # pyproject.toml, CHANGELOG.md; tagged v0.3.0
