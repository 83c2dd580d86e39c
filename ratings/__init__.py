"""Ratings and skill levels computed from verified results, and the federation export."""
