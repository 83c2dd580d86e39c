"""A slow, independent referee written from the rules in docs/match-record.md, not from the
engine: plain card strings, every capture enumerated with itertools, no code shared with `scopa`.

It covers replay, deal scoring and the end rules of completed matches (not timeouts or clocks);
`test_rules_worked_by_hand` compares it with the engine on simulated and damaged records.
"""

from itertools import combinations


def R(c):
    return int(c[:-1])


def S(c):
    return c[-1]


PV = {7: 21, 6: 18, 1: 16, 5: 15, 4: 14, 3: 13, 2: 12, 8: 10, 9: 10, 10: 10}
DEF = {
    "rebello": False,
    "napola": False,
    "primiera_missing_suit": "loses",
    "void_three_kings": True,
    "forced_capture": True,
}


def nsides(n):
    return 3 if n == 3 else 2


def subsets(table, target):
    out = []
    for k in range(1, len(table) + 1):
        for comb in combinations(table, k):
            if sum(R(c) for c in comb) == target:
                out.append(frozenset(comb))
    return out


def legal(variant, opts, card, table):
    r = R(card)
    if variant == "scopa-15":
        L = subsets(table, 15 - r)
        if not L or not opts["forced_capture"]:
            L.append(frozenset())
        return L
    eq = [frozenset([c]) for c in table if R(c) == r]
    if eq:
        return eq
    if variant == "scopa-d-assi" and r == 1 and table:
        return [frozenset(table)]
    return subsets(table, r) or [frozenset()]


def play_deal(variant, opts, n, dealer, deck, plays):
    """returns dict: error (code, play) or None, captured per side, scope per side, etc."""
    ns = nsides(n)
    hands = [[] for _ in range(n)]
    pos = 0

    def rnd():
        nonlocal pos
        for i in range(3 * n):
            hands[(dealer + 1 + i) % n].append(deck[pos])
            pos += 1

    rnd()
    table = deck[pos : pos + 4]
    pos += 4
    cap = [set() for _ in range(ns)]
    scope = [0] * ns
    ncap = [0] * ns
    last = None
    lastat = [None] * ns
    res = dict(
        cap=cap,
        scope=scope,
        ncap=ncap,
        lastat=lastat,
        error=None,
        played=0,
        void=False,
        df=0,
        table=table,
        hands=hands,
    )
    kings = sum(1 for c in table if R(c) == 10)
    if variant != "scopa-15" and opts["void_three_kings"] and kings >= 3:
        res["void"] = True
        return res
    if variant == "scopa-15":
        t = sum(R(c) for c in table)
        if t in (15, 30):
            s = dealer % ns
            cap[s] |= set(table)
            scope[s] += t // 15
            ncap[s] += 1
            last = s
            lastat[s] = -1
            res["df"] = t // 15
            table = []
    turn = (dealer + 1) % n
    for k, pl in enumerate(plays):
        if k >= 36:
            res["error"] = ("extra_plays", k)
            break
        if "seat" in pl and pl["seat"] != turn:
            res["error"] = ("wrong_seat", k)
            break
        card = pl["card"]
        if card not in hands[turn]:
            res["error"] = ("card_not_in_hand", k)
            break
        take = pl["take"]
        if len(set(take)) != len(take) or any(c not in table for c in take):
            res["error"] = ("take", k)
            break
        if frozenset(take) not in legal(variant, opts, card, table):
            res["error"] = ("illegal", k)
            break
        sweep = (
            variant == "scopa-d-assi" and R(card) == 1 and table and all(R(c) != 1 for c in table)
        )
        hands[turn].remove(card)
        if take:
            s = turn % ns
            for c in take:
                table.remove(c)
            cap[s] |= set(take) | {card}
            ncap[s] += 1
            last = s
            lastat[s] = k
            if not table and not sweep and k != 35:
                scope[s] += 1
        else:
            table.append(card)
        res["played"] = k + 1
        turn = (turn + 1) % n
        if (k + 1) % (3 * n) == 0 and pos < 40:
            rnd()
    res["last"] = last
    if res["error"] is None and res["played"] == 36 and last is not None:
        cap[last] |= set(table)
        table.clear()
    res["table"] = table
    return res


def strict(vals):
    b = max(vals)
    return vals.index(b) if vals.count(b) == 1 else None


def primiera(sets, mode):
    info = []
    for s in sets:
        best = {}
        for c in s:
            best[S(c)] = max(best.get(S(c), 0), PV[R(c)])
        info.append((len(best), sum(best.values())))
    comp = [t if k == 4 else -1 for k, t in info]
    if max(comp) >= 0:
        return strict(comp)
    if mode == "compare_present":
        return strict([t for _, t in info])
    return None


def score(variant, opts, cap, scope):
    ns = len(cap)
    bd = [dict(scope=scope[s]) for s in range(ns)]

    def add(s, k, v):
        if s is None:
            return
        bd[s][k] = bd[s].get(k, 0) + v

    counts = [len(c) for c in cap]
    den = [sum(1 for x in c if S(x) == "D") for c in cap]

    def holder(card):
        return next((s for s in range(ns) if card in cap[s]), None)

    if variant == "scopa-15":
        add(strict(den), "denari", 1)
        if 10 in den:
            add(den.index(10), "denari", 1)
        add(holder("7D"), "settebello", 1)
        sev = [sum(1 for x in c if R(x) == 7) for c in cap]
        add(strict(sev), "sette", 1)
        if 4 in sev:
            add(sev.index(4), "sette", 1)
        add(strict(counts), "carte", 1)
        for s in range(ns):
            if counts[s] < 10:
                for o in range(ns):
                    if o != s:
                        add(o, "poche_carte", 2)
    else:
        add(strict(counts), "carte", 1)
        add(strict(den), "denari", 1)
        add(holder("7D"), "settebello", 1)
        add(primiera(cap, opts["primiera_missing_suit"]), "primiera", 1)
        if opts["rebello"]:
            add(holder("10D"), "rebello", 1)
        if opts["napola"]:
            for s in range(ns):
                run = 0
                while run < 10 and f"{run + 1}D" in cap[s]:
                    run += 1
                if run >= 3:
                    add(s, "napola", run)
    return [sum(b.values()) for b in bd], bd


def verify_ref(doc):
    """dict(valid, error=(code, deal, play), points per deal, totals, winner, margin,
    reason)."""
    variant = doc["variant"]
    opts = dict(DEF)
    opts.update(doc.get("options", {}))
    n = len(doc["seats"])
    ns = nsides(n)
    end = doc["end"]
    ko = doc.get("knockout", False)
    outcome = doc.get("outcome", {"kind": "completed"})
    inter = outcome["kind"] in ("timeout", "abandon")
    totals = [0] * ns
    pts_list = []
    over = False
    winner = None
    reason = None
    phase = "regular"
    regular = 0
    tb = 0
    contenders = None
    exp_dealer = None
    deals = doc["deals"]
    for d, deal in enumerate(deals):
        if over:
            return dict(valid=False, error=("extra_deals", d, None), points=pts_list)
        if exp_dealer is not None and deal["dealer"] != exp_dealer:
            return dict(valid=False, error=("wrong_dealer", d, None), points=pts_list)
        res = play_deal(variant, opts, n, deal["dealer"], list(deal["deck"]), deal.get("plays", []))
        if deal.get("void"):
            if not res["void"]:
                return dict(valid=False, error=("not_void", d, None), points=pts_list)
            if deal.get("plays"):
                return dict(valid=False, error=("void_with_plays", d, 0), points=pts_list)
            exp_dealer = deal["dealer"]
            pts_list.append([0] * ns)
            continue
        if res["void"]:
            return dict(valid=False, error=("must_be_void", d, None), points=pts_list)
        if res["error"]:
            return dict(valid=False, error=(res["error"][0], d, res["error"][1]), points=pts_list)
        exp_dealer = (deal["dealer"] + 1) % n
        if res["played"] < 36:
            if not (inter and d == len(deals) - 1):
                return dict(valid=False, error=("missing_plays", d, res["played"]), points=pts_list)
            return dict(valid="interrupted", points=pts_list, res=res, totals=totals)
        pts, _ = score(variant, opts, res["cap"], res["scope"])
        pts_list.append(pts)
        for s in range(ns):
            totals[s] += pts[s]
        # match end
        if variant == "scopa-15" and any(c == 0 for c in res["ncap"]):
            caps = [s for s in range(ns) if res["ncap"][s] > 0]
            winner = None
            if caps:
                b = max(totals[s] for s in caps)
                top = [s for s in caps if totals[s] == b]
                winner = top[0] if len(top) == 1 else None
            over = True
            reason = "no_capture"
            continue
        if phase == "tiebreak":
            tb += 1
            b = max(pts[s] for s in contenders)
            top = [s for s in contenders if pts[s] == b]
            if len(top) == 1:
                over, winner, reason = True, top[0], "tiebreak"
                continue
            contenders = top
            if tb >= 3:
                # drop the one who captured last, until one remains
                alive = list(top)
                while len(alive) > 1:
                    la = [res["lastat"][s] if res["lastat"][s] is not None else -2 for s in alive]
                    m = max(la)
                    if la.count(m) > 1:
                        alive = None
                        break
                    alive.remove(alive[la.index(m)])
                over, winner, reason = True, (alive[0] if alive else None), "tiebreak_last_capture"
            continue
        regular += 1
        b = max(totals)
        leaders = [s for s in range(ns) if totals[s] == b]
        single = leaders[0] if len(leaders) == 1 else None
        if "target" in end and single is not None and totals[single] >= end["target"]:
            over, winner, reason = True, single, "target"
            continue
        tu = outcome.get("time_up_in_deal")
        if tu is not None and d >= tu:
            if single is not None:
                over, winner, reason = True, single, "time_limit"
            continue
        if "deals" in end and regular >= end["deals"]:
            if single is not None:
                over, winner, reason = True, single, "deals"
            elif ko:
                phase = "tiebreak"
                contenders = leaders
            else:
                over, winner, reason = True, None, "draw"
    if inter:
        return dict(valid="interrupted-finished", points=pts_list, totals=totals, over=over)
    if not over:
        return dict(valid=False, error=("missing_deals", len(deals), None), points=pts_list)
    margin = 0
    if winner is not None:
        margin = max(0, totals[winner] - max(t for s, t in enumerate(totals) if s != winner))
    return dict(
        valid=True, points=pts_list, totals=totals, winner=winner, margin=margin, reason=reason
    )
