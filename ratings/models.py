"""Models of the ratings app."""
