"""Layout-generation evaluation (CANVAS, arXiv 2511.20737): Figma JSON and renders of a
generated UI design scored against the ground truth. See docs/layout.md."""
