"""The package version (read by the report writers without importing the whole API)."""

__version__ = "0.1.0"
