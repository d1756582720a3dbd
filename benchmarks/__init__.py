"""Benchmarks: trace generator, runner, msgspec reference (see README.md)."""
