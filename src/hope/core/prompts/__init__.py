"""Versioned prompt files. Each YAML file holds one prompt; its response schema is in schemas.py."""
