"""Small builders for deals that add up."""


def deal(home, away, **flags):
    """A deal whose breakdown is all in scope, so it always adds up."""
    result = {
        "points": [home, away],
        "breakdown": [{"scope": home} if home else {}, {"scope": away} if away else {}],
    }
    result.update(flags)
    return result


def deals(*pairs):
    return [deal(home, away) for home, away in pairs]
