"""Matches as cards are played: the rules engine (``games.engine``) and the records it verifies."""
