"""Shared fixtures. App-specific fixtures live in each test package's own conftest."""
