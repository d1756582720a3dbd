"""Exports of the analysis into other tools' formats (``traceviz export``)."""
