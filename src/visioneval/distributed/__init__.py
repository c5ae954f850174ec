"""Runs past one machine: shards merged into one run, and Ray running the shards."""
