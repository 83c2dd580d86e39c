"""Services of the ratings app: the ORM layer over the pure algorithms."""
