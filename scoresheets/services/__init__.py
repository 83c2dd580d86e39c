"""The ORM layer of the score sheets at the table."""
