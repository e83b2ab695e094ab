"""The one place filtex's version is written (setup.cfg reads it)."""
__version__ = "0.1.0"
