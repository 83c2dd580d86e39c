"""Matches as cards are played: the rules engine (``scopa``) and the records it verifies."""
