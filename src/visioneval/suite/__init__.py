"""Suites: several benchmarks x models (x settings) in one command (`visioneval suite`)."""
