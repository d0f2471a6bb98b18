"""Measuring Loupe on question sets (`manage.py evaluate`): it adds documents, asks and
searches as a person would, so it sits above every app it measures (docs/architecture.md)."""
