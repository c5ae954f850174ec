"""Offline models served by the `builtin` backend: classical baselines that read the prompt
and the image like a VLM would, so the whole pipeline runs with no server."""
