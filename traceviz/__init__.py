"""traceviz."""
