"""Request variants: every sample sent again in a changed form (no image, a blank image,
re-encoded, resized, grey), as a family of its own on the same rows, summarized beside the
original with paired tests (docs/controls.md)."""
