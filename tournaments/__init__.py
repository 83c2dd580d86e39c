"""Players, lines, tournaments, stages, rounds, matches, results and standings."""
