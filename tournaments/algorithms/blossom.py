"""networkx's maximum-weight matching, step for step, over integer weights of any size.

The Swiss engine (``caissify-pairings``) calls ``networkx.max_weight_matching`` about once per
line per round on edge weights of hundreds of bits, and reads from each answer which line got
which partner, so among several maximum-weight matchings it depends on the one networkx picks.
This module is networkx 3.x's algorithm (Edmonds' blossom method, after Van Rantwijk; BSD
licence) with the same visiting orders, so it returns the same set of pairs (and the same
orientation of each pair) for the same graph; what changes is the representation (vertices and
blossoms are integers indexing lists, not dicts of objects), which mypyc compiles to C at install
(setup.py; ``matching.py`` loads the compiled copy when it is current). Its optimality
self-check (``verifyOptimum``, an assertion) is left out. Equality with networkx is tested on
random graphs and on every graph the Swiss engine builds (tests/algorithms/test_blossom.py).

The orders that decide ties: vertices in the graph's node order, neighbours in adjacency order,
blossoms in order of creation, a blossom's leaves depth-first from its last child, and ``<``
(never ``<=``) when a better edge or delta replaces the one found first.
"""

from __future__ import annotations

from typing import Any

NONE = -1  # no vertex, no edge, no blossom


class _Matcher:
    """One run of the algorithm. Ids below ``n`` are vertices, from ``n`` on blossoms."""

    def __init__(
        self,
        n: int,
        nbrs: list[list[int]],
        nbr_w2: list[list[int]],
        weights2: dict[int, int],
        maxweight: int,
    ) -> None:
        self.n = n
        self.nbrs = nbrs
        # twice each edge's weight, as the slack uses it: by neighbour, and by v * n + w
        self.nbr_w2 = nbr_w2
        self.weights2 = weights2
        self.mate: list[int] = [NONE] * n
        self.mate_order: list[int] = []  # vertices in the order they were first matched
        # per id (vertices, then blossoms as they are created)
        self.label: list[int] = [0] * n  # 0: none, 1: S, 2: T, 5: S on a scanned path
        self.le_v: list[int] = [NONE] * n  # label edge (v, w), NONE: none
        self.le_w: list[int] = [NONE] * n
        self.be_v: list[int] = [NONE] * n  # best edge
        self.be_w: list[int] = [NONE] * n
        # the best edge's slack, valid while be_epoch equals epoch (the duals have not moved)
        self.be_slack: list[int] = [0] * n
        self.be_epoch: list[int] = [NONE] * n
        self.epoch = 0
        self.blossomparent: list[int] = [NONE] * n
        self.blossombase: list[int] = list(range(n))
        # per blossom (index id - n)
        self.childs: list[list[int]] = []
        self.edges: list[list[tuple[int, int]]] = []
        self.mybestedges: list[list[tuple[int, int]] | None] = []
        # per vertex
        self.inblossom: list[int] = list(range(n))
        self.dualvar: list[int] = [maxweight] * n
        # live blossoms in order of creation, with their dual
        self.blossomdual: dict[int, int] = {}
        self.allowedge: set[int] = set()
        self.queue: list[int] = []

    def slack(self, v: int, w: int) -> int:
        return self.dualvar[v] + self.dualvar[w] - self.weights2[v * self.n + w]

    def best_slack(self, x: int) -> int:
        if self.be_epoch[x] != self.epoch:
            self.be_slack[x] = self.slack(self.be_v[x], self.be_w[x])
            self.be_epoch[x] = self.epoch
        return self.be_slack[x]

    def set_best(self, x: int, v: int, w: int, slack: int) -> None:
        self.be_v[x] = v
        self.be_w[x] = w
        self.be_slack[x] = slack
        self.be_epoch[x] = self.epoch

    def allow(self, v: int, w: int) -> None:
        self.allowedge.add(v * self.n + w)
        self.allowedge.add(w * self.n + v)

    def set_mate(self, v: int, w: int) -> None:
        if self.mate[v] == NONE:
            self.mate_order.append(v)
        self.mate[v] = w

    def leaves(self, b: int) -> list[int]:
        n = self.n
        out: list[int] = []
        stack = list(self.childs[b - n])
        while stack:
            t = stack.pop()
            if t >= n:
                stack.extend(self.childs[t - n])
            else:
                out.append(t)
        return out

    def assign_label(self, w: int, t: int, v: int) -> None:
        b = self.inblossom[w]
        self.label[w] = self.label[b] = t
        if v != NONE:
            self.le_v[w] = self.le_v[b] = v
            self.le_w[w] = self.le_w[b] = w
        else:
            self.le_v[w] = self.le_v[b] = NONE
            self.le_w[w] = self.le_w[b] = NONE
        self.be_v[w] = self.be_v[b] = NONE
        self.be_w[w] = self.be_w[b] = NONE
        if t == 1:
            if b >= self.n:
                self.queue.extend(self.leaves(b))
            else:
                self.queue.append(b)
        elif t == 2:
            base = self.blossombase[b]
            self.assign_label(self.mate[base], 1, base)

    def scan_blossom(self, v: int, w: int) -> int:
        label = self.label
        path: list[int] = []
        base = NONE
        while v != NONE:
            b = self.inblossom[v]
            if label[b] & 4:
                base = self.blossombase[b]
                break
            path.append(b)
            label[b] = 5
            if self.le_v[b] == NONE:
                v = NONE
            else:
                v = self.le_v[b]
                b = self.inblossom[v]
                v = self.le_v[b]
            if w != NONE:
                v, w = w, v
        for b in path:
            label[b] = 1
        return base

    def add_blossom(self, base: int, v: int, w: int) -> None:
        n = self.n
        inblossom = self.inblossom
        label = self.label
        bb = inblossom[base]
        bv = inblossom[v]
        bw = inblossom[w]
        b = len(self.label)
        label.append(0)
        for column in (self.le_v, self.le_w, self.be_v, self.be_w):
            column.append(NONE)
        self.be_slack.append(0)
        self.be_epoch.append(NONE)
        self.blossombase.append(base)
        self.blossomparent.append(NONE)
        self.blossomparent[bb] = b
        path: list[int] = []
        edgs: list[tuple[int, int]] = [(v, w)]
        self.childs.append(path)
        self.edges.append(edgs)
        self.mybestedges.append(None)
        while bv != bb:
            self.blossomparent[bv] = b
            path.append(bv)
            edgs.append((self.le_v[bv], self.le_w[bv]))
            v = self.le_v[bv]
            bv = inblossom[v]
        path.append(bb)
        path.reverse()
        edgs.reverse()
        while bw != bb:
            self.blossomparent[bw] = b
            path.append(bw)
            edgs.append((self.le_w[bw], self.le_v[bw]))
            w = self.le_v[bw]
            bw = inblossom[w]
        label[b] = 1
        self.le_v[b] = self.le_v[bb]
        self.le_w[b] = self.le_w[bb]
        self.blossomdual[b] = 0
        for leaf in self.leaves(b):
            if label[inblossom[leaf]] == 2:
                self.queue.append(leaf)
            inblossom[leaf] = b
        bestedgeto: dict[int, tuple[int, int]] = {}
        for sub in path:
            nblist: list[tuple[int, int]]
            if sub >= n:
                mine = self.mybestedges[sub - n]
                if mine is not None:
                    nblist = mine
                    self.mybestedges[sub - n] = None
                else:
                    nblist = [(x, y) for x in self.leaves(sub) for y in self.nbrs[x] if x != y]
            else:
                nblist = [(sub, y) for y in self.nbrs[sub] if sub != y]
            for k in nblist:
                i, j = k
                if inblossom[j] == b:
                    i, j = j, i
                bj = inblossom[j]
                if bj != b and label[bj] == 1:
                    best = bestedgeto.get(bj)
                    if best is None or self.slack(i, j) < self.slack(best[0], best[1]):
                        bestedgeto[bj] = k
            self.be_v[sub] = NONE
            self.be_w[sub] = NONE
        mybest = list(bestedgeto.values())
        self.mybestedges[b - n] = mybest
        self.be_v[b] = NONE
        self.be_w[b] = NONE
        found = False
        mybestslack = 0
        for x, y in mybest:
            kslack = self.slack(x, y)
            if not found or kslack < mybestslack:
                found = True
                self.set_best(b, x, y, kslack)
                mybestslack = kslack

    def expand_blossom(self, top: int, endstage: bool) -> None:
        n = self.n
        stack: list[tuple[int, int]] = [(top, 0)]
        while stack:
            b, i = stack.pop()
            childs = self.childs[b - n]
            descended = False
            while i < len(childs):
                s = childs[i]
                i += 1
                self.blossomparent[s] = NONE
                if s >= n:
                    if endstage and self.blossomdual[s] == 0:
                        stack.append((b, i))
                        stack.append((s, 0))
                        descended = True
                        break
                    for leaf in self.leaves(s):
                        self.inblossom[leaf] = s
                else:
                    self.inblossom[s] = s
            if not descended:
                self._expand_rest(b, endstage)

    def _expand_rest(self, b: int, endstage: bool) -> None:
        n = self.n
        label = self.label
        if not endstage and label[b] == 2:
            childs = self.childs[b - n]
            edges = self.edges[b - n]
            entrychild = self.inblossom[self.le_w[b]]
            j = childs.index(entrychild)
            if j & 1:
                j -= len(childs)
                jstep = 1
            else:
                jstep = -1
            v = self.le_v[b]
            w = self.le_w[b]
            while j != 0:
                if jstep == 1:
                    p, q = edges[j]
                else:
                    q, p = edges[j - 1]
                label[w] = 0
                label[q] = 0
                self.assign_label(w, 2, v)
                self.allow(p, q)
                j += jstep
                if jstep == 1:
                    v, w = edges[j]
                else:
                    w, v = edges[j - 1]
                self.allow(v, w)
                j += jstep
            bw = childs[j]
            label[w] = label[bw] = 2
            self.le_v[w] = self.le_v[bw] = v
            self.le_w[w] = self.le_w[bw] = w
            self.be_v[bw] = NONE
            self.be_w[bw] = NONE
            j += jstep
            while childs[j] != entrychild:
                bv = childs[j]
                if label[bv] == 1:
                    j += jstep
                    continue
                found = NONE
                if bv >= n:
                    for leaf in self.leaves(bv):
                        if label[leaf]:
                            found = leaf
                            break
                elif label[bv]:
                    found = bv
                if found != NONE:
                    label[found] = 0
                    label[self.mate[self.blossombase[bv]]] = 0
                    self.assign_label(found, 2, self.le_v[found])
                j += jstep
        label[b] = 0
        self.le_v[b] = self.le_w[b] = NONE
        self.be_v[b] = self.be_w[b] = NONE
        del self.blossomdual[b]

    def augment_blossom(self, b: int, v: int) -> None:
        n = self.n
        t = v
        while self.blossomparent[t] != b:
            t = self.blossomparent[t]
        if t >= n:
            self.augment_blossom(t, v)
        childs = self.childs[b - n]
        edges = self.edges[b - n]
        i = j = childs.index(t)
        if i & 1:
            j -= len(childs)
            jstep = 1
        else:
            jstep = -1
        while j != 0:
            j += jstep
            t = childs[j]
            if jstep == 1:
                w, x = edges[j]
            else:
                x, w = edges[j - 1]
            if t >= n:
                self.augment_blossom(t, w)
            j += jstep
            t = childs[j]
            if t >= n:
                self.augment_blossom(t, x)
            self.set_mate(w, x)
            self.set_mate(x, w)
        childs = childs[i:] + childs[:i]
        self.childs[b - n] = childs
        self.edges[b - n] = edges[i:] + edges[:i]
        self.blossombase[b] = self.blossombase[childs[0]]

    def augment_matching(self, v: int, w: int) -> None:
        n = self.n
        for s, j in ((v, w), (w, v)):
            while True:
                bs = self.inblossom[s]
                if bs >= n:
                    self.augment_blossom(bs, s)
                self.set_mate(s, j)
                if self.le_v[bs] == NONE:
                    break
                t = self.le_v[bs]
                bt = self.inblossom[t]
                s = self.le_v[bt]
                j = self.le_w[bt]
                if bt >= n:
                    self.augment_blossom(bt, j)
                self.set_mate(j, s)

    def run(self, maxcardinality: bool) -> None:
        n = self.n
        label = self.label
        inblossom = self.inblossom
        dualvar = self.dualvar
        allowedge = self.allowedge
        queue = self.queue
        while True:
            for x in range(n):
                label[x] = 0
                self.le_v[x] = self.le_w[x] = NONE
                self.be_v[x] = self.be_w[x] = NONE
            for b in self.blossomdual:
                label[b] = 0
                self.le_v[b] = self.le_w[b] = NONE
                self.be_v[b] = self.be_w[b] = NONE
                self.mybestedges[b - n] = None
            allowedge.clear()
            queue.clear()
            for v in range(n):
                if self.mate[v] == NONE and label[inblossom[v]] == 0:
                    self.assign_label(v, 1, NONE)
            augmented = False
            while True:
                while queue and not augmented:
                    v = queue.pop()
                    row_w2 = self.nbr_w2[v]
                    for k, w in enumerate(self.nbrs[v]):
                        bv = inblossom[v]
                        bw = inblossom[w]
                        if bv == bw:
                            continue
                        key = v * n + w
                        kslack = 0
                        if key not in allowedge:
                            kslack = dualvar[v] + dualvar[w] - row_w2[k]
                            if kslack <= 0:
                                self.allow(v, w)
                        if key in allowedge:
                            if label[bw] == 0:
                                self.assign_label(w, 2, v)
                            elif label[bw] == 1:
                                base = self.scan_blossom(v, w)
                                if base != NONE:
                                    self.add_blossom(base, v, w)
                                else:
                                    self.augment_matching(v, w)
                                    augmented = True
                                    break
                            elif label[w] == 0:
                                label[w] = 2
                                self.le_v[w] = v
                                self.le_w[w] = w
                        elif label[bw] == 1:
                            if self.be_v[bv] == NONE or kslack < self.best_slack(bv):
                                self.set_best(bv, v, w, kslack)
                        elif label[w] == 0 and (
                            self.be_v[w] == NONE or kslack < self.best_slack(w)
                        ):
                            self.set_best(w, v, w, kslack)
                if augmented:
                    break

                deltatype = -1
                delta = 0
                delta_v = delta_w = deltablossom = NONE
                if not maxcardinality:
                    deltatype = 1
                    delta = min(dualvar)
                for v in range(n):
                    if label[inblossom[v]] == 0 and self.be_v[v] != NONE:
                        d = self.best_slack(v)
                        if deltatype == -1 or d < delta:
                            delta = d
                            deltatype = 2
                            delta_v = self.be_v[v]
                            delta_w = self.be_w[v]
                # vertices, then blossoms: networkx's blossomparent dict order
                for b in range(n):
                    if self.blossomparent[b] == NONE and label[b] == 1 and self.be_v[b] != NONE:
                        d = self.best_slack(b) // 2
                        if deltatype == -1 or d < delta:
                            delta = d
                            deltatype = 3
                            delta_v = self.be_v[b]
                            delta_w = self.be_w[b]
                for b in self.blossomdual:
                    if self.blossomparent[b] == NONE and label[b] == 1 and self.be_v[b] != NONE:
                        d = self.best_slack(b) // 2
                        if deltatype == -1 or d < delta:
                            delta = d
                            deltatype = 3
                            delta_v = self.be_v[b]
                            delta_w = self.be_w[b]
                for b, bdual in self.blossomdual.items():
                    if (
                        self.blossomparent[b] == NONE
                        and label[b] == 2
                        and (deltatype == -1 or bdual < delta)
                    ):
                        delta = bdual
                        deltatype = 4
                        deltablossom = b
                if deltatype == -1:
                    deltatype = 1
                    delta = max(0, min(dualvar))

                self.epoch += 1
                for v in range(n):
                    lab = label[inblossom[v]]
                    if lab == 1:
                        dualvar[v] -= delta
                    elif lab == 2:
                        dualvar[v] += delta
                for b in self.blossomdual:
                    if self.blossomparent[b] == NONE:
                        if label[b] == 1:
                            self.blossomdual[b] += delta
                        elif label[b] == 2:
                            self.blossomdual[b] -= delta

                if deltatype == 1:
                    break
                if deltatype == 2 or deltatype == 3:
                    self.allow(delta_v, delta_w)
                    queue.append(delta_v)
                else:
                    self.expand_blossom(deltablossom, False)

            if not augmented:
                break
            for b in list(self.blossomdual):
                if b not in self.blossomdual:
                    continue
                if self.blossomparent[b] == NONE and label[b] == 1 and self.blossomdual[b] == 0:
                    self.expand_blossom(b, True)


def match_indices(
    nbrs: list[list[int]],
    nbr_w: list[list[int]],
    maxcardinality: bool,
) -> tuple[list[int], list[int]]:
    """The matching of vertices ``0 .. len(nbrs) - 1``: each vertex's mate (``NONE``: single)
    and the vertices in the order networkx's mate dict would hold them.

    ``nbrs[v]`` lists v's neighbours in the graph's adjacency order (no self-loops) and
    ``nbr_w[v]`` the weights of those edges, the same weight both ways."""
    n = len(nbrs)
    maxweight = 0
    nbr_w2: list[list[int]] = []
    weights2: dict[int, int] = {}
    for v in range(n):
        row_w2: list[int] = []
        row = nbrs[v]
        for k, wt in enumerate(nbr_w[v]):
            if wt > maxweight:
                maxweight = wt
            row_w2.append(2 * wt)
            weights2[v * n + row[k]] = 2 * wt
        nbr_w2.append(row_w2)
    matcher = _Matcher(n, nbrs, nbr_w2, weights2, maxweight)
    if n:
        matcher.run(maxcardinality)
    return matcher.mate, matcher.mate_order


def max_weight_matching(
    adjacency: dict[Any, dict[Any, dict[Any, Any]]],
    maxcardinality: bool = False,
    weight: str = "weight",
) -> set[tuple[Any, Any]] | None:
    """``networkx.max_weight_matching`` over a graph's adjacency dict (``Graph._adj``): the same
    set of pairs, or ``None`` when a weight is not a plain ``int`` (networkx then does float
    arithmetic, which this module does not copy)."""
    nodes = list(adjacency)
    index = {node: i for i, node in enumerate(nodes)}
    nbrs: list[list[int]] = []
    nbr_w: list[list[int]] = []
    for node in nodes:
        row: list[int] = []
        row_w: list[int] = []
        for other, data in adjacency[node].items():
            wt = data.get(weight, 1)
            if type(wt) is not int:
                return None
            j = index[other]
            if j != len(nbrs):  # a self-loop never takes part (networkx skips it too)
                row.append(j)
                row_w.append(wt)
        nbrs.append(row)
        nbr_w.append(row_w)
    mate, order = match_indices(nbrs, nbr_w, maxcardinality)
    pairs: set[tuple[Any, Any]] = set()
    for v in order:  # as networkx turns its mate dict into a set of pairs
        edge = (nodes[v], nodes[mate[v]])
        if (edge[1], edge[0]) not in pairs:
            pairs.add(edge)
    return pairs
