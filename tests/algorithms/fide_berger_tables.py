"""The Berger tables as published in the FIDE Handbook, C.05 Annex 1 ("Berger Tables for
Round-Robin Tournaments"), transcribed as printed: ``home-away`` per board, boards in order.

Where there is an odd number of players, the highest number counts as a bye.

Transcribed from the FIDE text as quoted in the Gambit Pairing project's round-robin module
(gambitpairing, GPL) and checked line by line against Chris Fox's copy of the tables
(c.w.fox.tripod.com/chess/berger.html) for 4-12 and the first rounds of 14. These are literal
data, not output of our generator. (The FIDE text has a typo "2-9. 3-8" in round 10 of the
14-player table; read as "2-9, 3-8".)
"""

PUBLISHED = {
    4: """
Rd 1: 1-4, 2-3
Rd 2: 4-3, 1-2
Rd 3: 2-4, 3-1
""",
    6: """
Rd 1: 1-6, 2-5, 3-4
Rd 2: 6-4, 5-3, 1-2
Rd 3: 2-6, 3-1, 4-5
Rd 4: 6-5, 1-4, 2-3
Rd 5: 3-6, 4-2, 5-1
""",
    8: """
Rd 1: 1-8, 2-7, 3-6, 4-5
Rd 2: 8-5, 6-4, 7-3, 1-2
Rd 3: 2-8, 3-1, 4-7, 5-6
Rd 4: 8-6, 7-5, 1-4, 2-3
Rd 5: 3-8, 4-2, 5-1, 6-7
Rd 6: 8-7, 1-6, 2-5, 3-4
Rd 7: 4-8, 5-3, 6-2, 7-1
""",
    10: """
Rd 1: 1-10, 2-9, 3-8, 4-7, 5-6
Rd 2: 10-6, 7-5, 8-4, 9-3, 1-2
Rd 3: 2-10, 3-1, 4-9, 5-8, 6-7
Rd 4: 10-7, 8-6, 9-5, 1-4, 2-3
Rd 5: 3-10, 4-2, 5-1, 6-9, 7-8
Rd 6: 10-8, 9-7, 1-6, 2-5, 3-4
Rd 7: 4-10, 5-3, 6-2, 7-1, 8-9
Rd 8: 10-9, 1-8, 2-7, 3-6, 4-5
Rd 9: 5-10, 6-4, 7-3, 8-2, 9-1
""",
    12: """
Rd 1: 1-12, 2-11, 3-10, 4-9, 5-8, 6-7
Rd 2: 12-7, 8-6, 9-5, 10-4, 11-3, 1-2
Rd 3: 2-12, 3-1, 4-11, 5-10, 6-9, 7-8
Rd 4: 12-8, 9-7, 10-6, 11-5, 1-4, 2-3
Rd 5: 3-12, 4-2, 5-1, 6-11, 7-10, 8-9
Rd 6: 12-9, 10-8, 11-7, 1-6, 2-5, 3-4
Rd 7: 4-12, 5-3, 6-2, 7-1, 8-11, 9-10
Rd 8: 12-10, 11-9, 1-8, 2-7, 3-6, 4-5
Rd 9: 5-12, 6-4, 7-3, 8-2, 9-1, 10-11
Rd 10: 12-11, 1-10, 2-9, 3-8, 4-7, 5-6
Rd 11: 6-12, 7-5, 8-4, 9-3, 10-2, 11-1
""",
    14: """
Rd 1: 1-14, 2-13, 3-12, 4-11, 5-10, 6-9, 7-8
Rd 2: 14-8, 9-7, 10-6, 11-5, 12-4, 13-3, 1-2
Rd 3: 2-14, 3-1, 4-13, 5-12, 6-11, 7-10, 8-9
Rd 4: 14-9, 10-8, 11-7, 12-6, 13-5, 1-4, 2-3
Rd 5: 3-14, 4-2, 5-1, 6-13, 7-12, 8-11, 9-10
Rd 6: 14-10, 11-9, 12-8, 13-7, 1-6, 2-5, 3-4
Rd 7: 4-14, 5-3, 6-2, 7-1, 8-13, 9-12, 10-11
Rd 8: 14-11, 12-10, 13-9, 1-8, 2-7, 3-6, 4-5
Rd 9: 5-14, 6-4, 7-3, 8-2, 9-1, 10-13, 11-12
Rd 10: 14-12, 13-11, 1-10, 2-9, 3-8, 4-7, 5-6
Rd 11: 6-14, 7-5, 8-4, 9-3, 10-2, 11-1, 12-13
Rd 12: 14-13, 1-12, 2-11, 3-10, 4-9, 5-8, 6-7
Rd 13: 7-14, 8-6, 9-5, 10-4, 11-3, 12-2, 13-1
""",
    16: """
Rd 1: 1-16, 2-15, 3-14, 4-13, 5-12, 6-11, 7-10, 8-9
Rd 2: 16-9, 10-8, 11-7, 12-6, 13-5, 14-4, 15-3, 1-2
Rd 3: 2-16, 3-1, 4-15, 5-14, 6-13, 7-12, 8-11, 9-10
Rd 4: 16-10, 11-9, 12-8, 13-7, 14-6, 15-5, 1-4, 2-3
Rd 5: 3-16, 4-2, 5-1, 6-15, 7-14, 8-13, 9-12, 10-11
Rd 6: 16-11, 12-10, 13-9, 14-8, 15-7, 1-6, 2-5, 3-4
Rd 7: 4-16, 5-3, 6-2, 7-1, 8-15, 9-14, 10-13, 11-12
Rd 8: 16-12, 13-11, 14-10, 15-9, 1-8, 2-7, 3-6, 4-5
Rd 9: 5-16, 6-4, 7-3, 8-2, 9-1, 10-15, 11-14, 12-13
Rd 10: 16-13, 14-12, 15-11, 1-10, 2-9, 3-8, 4-7, 5-6
Rd 11: 6-16, 7-5, 8-4, 9-3, 10-2, 11-1, 12-15, 13-14
Rd 12: 16-14, 15-13, 1-12, 2-11, 3-10, 4-9, 5-8, 6-7
Rd 13: 7-16, 8-6, 9-5, 10-4, 11-3, 12-2, 13-1, 14-15
Rd 14: 16-15, 1-14, 2-13, 3-12, 4-11, 5-10, 6-9, 7-8
Rd 15: 8-16, 9-7, 10-6, 11-5, 12-4, 13-3, 14-2, 15-1
""",
}


def parse(text: str) -> list[list[tuple[int, int]]]:
    """``Rd k: a-b, c-d`` lines → rounds of ``(home, away)``, checking the round numbers."""
    rounds: list[list[tuple[int, int]]] = []
    for expected, line in enumerate(text.strip().splitlines(), start=1):
        label, boards = line.split(":")
        assert label == f"Rd {expected}", line
        rounds.append(
            [tuple(int(x) for x in board.strip().split("-")) for board in boards.split(",")]
        )
    return rounds
