"""Stage 1, load and merge: YAML with positions, layers and `inherits`, the overlay schema,
templating, the variant data and the render budget."""
