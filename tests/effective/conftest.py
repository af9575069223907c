"""The effective tests use the session's real helm (``helm`` in tests/conftest.py)."""
