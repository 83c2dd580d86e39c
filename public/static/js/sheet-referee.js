/* The engine's deal-sheet referee, ported for the players' phone offline (docs/at-the-table.md,
 * "What the phone checks offline").
 *
 * Logic only: every figure comes from the engine as data, generated from its registry by the
 * server and put in the sheet's page (scopa/sheet.py `referee_table`, scopa/match_end.py
 * `rule_table`, tournaments/services/results/deciding.py `offline_referee`). Three parts:
 *
 * - `checkDeal(table, deal)`: scopa.sheet.check_deal, the reasons one deal cannot happen;
 *   `message(table, error, lang, names)` words one of them as the engine does;
 * - `judgeSheet(rule, deals, outcome, offender, timeExpired)`: scopa.match_end.judge_sheet, the
 *   match-end rule on a whole sheet (who won and why, or the problem's code);
 * - `progress(referee, typed, timeExpired)`: the check view's answer (results.sheet_progress),
 *   the sheet as typed so far read as the server would read it, in the page's language.
 *
 * The server still referees every sheet that arrives. tests/engine/test_sheet_referee_js.py runs
 * this file under Node on sheets generated from the engine and fails on any verdict that differs.
 * No dependency, no build: a browser global (ScopaReferee) and a CommonJS module for Node. */
(function (root, factory) {
  "use strict";
  if (typeof module === "object" && module.exports) {
    module.exports = factory();
  } else {
    root.ScopaReferee = factory();
  }
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  function has(row, key) {
    return Object.prototype.hasOwnProperty.call(row, key);
  }

  function get(row, key) {
    return has(row, key) ? row[key] : 0;
  }

  function sum(values) {
    return values.reduce(function (total, value) {
      return total + value;
    }, 0);
  }

  function error(code, side, category, params) {
    return { code: code, side: side, category: category, params: params || {} };
  }

  // ------------------------------------------------------------------ one deal (check_deal)

  function allows(scope, counts) {
    var key = counts.join(",");
    var found = scope.counts.some(function (allowed) {
      return allowed.join(",") === key;
    });
    return found && sum(counts) <= scope.total;
  }

  function scopeErrors(table, deal) {
    var scope = table.scope;
    var found = [];
    var counts = deal.breakdown.map(function (row) {
      return get(row, "scope");
    });
    var extra = counts.map(function (_points, side) {
      // an interrupted deal: each opponent of the offender gets one more scopa
      return deal.penalty && side !== deal.offender ? 1 : 0;
    });
    counts.forEach(function (points, side) {
      var most = scope.per_side + extra[side];
      if (points > most) {
        found.push(error("scope_side", side, "scope", { points: points, max: most, why: scope.why }));
      }
    });
    if (found.length) {
      return found;
    }
    var made = deal.penalty
      ? counts.map(function (points, side) {
          return Math.max(0, points - extra[side]);
        })
      : counts;
    if (!allows(scope, made)) {
      found.push(error("scope_combination", null, "scope", { counts: counts, why: scope.why }));
    }
    return found;
  }

  function checkDeal(table, deal) {
    var errors = [];
    var breakdown = deal.breakdown;
    breakdown.forEach(function (row, side) {
      Object.keys(row).forEach(function (key) {
        if (table.known.indexOf(key) === -1) {
          var unknown = error("unknown_category", side, key);
          unknown.variant = true;
          errors.push(unknown);
        }
      });
    });
    if (errors.length) {
      return errors;
    }
    errors = errors.concat(scopeErrors(table, deal));
    table.categories.forEach(function (category) {
      var key = category.key;
      if (key === "scope") {
        return;
      }
      var limits = deal.penalty ? category.penalty_limits : category.limits;
      var given = breakdown.map(function (row) {
        return get(row, key);
      });
      given.forEach(function (points, side) {
        if (points > limits.per_side) {
          errors.push(error("too_many", side, key, { points: points, max: limits.per_side }));
        } else if (points && !deal.penalty && category.possible.indexOf(points) === -1) {
          errors.push(error("impossible_value", side, key, { points: points, values: category.possible.join(", ") }));
        }
      });
      if (limits.one_side && given.filter(Boolean).length > 1) {
        errors.push(error("both_sides", null, key));
      } else if (limits.total !== null && sum(given) > limits.total) {
        errors.push(error("too_many_total", null, key, { points: sum(given), max: limits.total }));
      }
    });
    if (!deal.penalty && !errors.length) {
      breakdown.forEach(function (row, side) {
        table.implications.forEach(function (rule) {
          var points = get(row, rule.category);
          if (points >= rule.at_least && !get(row, rule.implied)) {
            errors.push(error("implied", side, rule.category, { points: points, implied: rule.implied_text }));
          }
        });
      });
    }
    return errors;
  }

  function label(table, key, lang) {
    var known = table.labels[key];
    if (known) {
      return known[lang === "en" ? "en" : "it"];
    }
    var text = key.replace(/_/g, " ");
    return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
  }

  function message(table, found, lang, names) {
    var en = lang === "en";
    var params = {};
    Object.keys(found.params).forEach(function (key) {
      var value = found.params[key];
      if (key === "why" || key === "implied") {
        params[key + "_it"] = value.it;
        params[key + "_en"] = value.en;
      } else if (key === "counts") {
        params.counts = value.join(en ? " and " : " e ");
      } else {
        params[key] = value;
      }
    });
    if (found.side !== null) {
      params.side =
        names && found.side < names.length ? names[found.side] : (en ? "side " : "squadra ") + (found.side + 1);
    }
    if (found.category !== null) {
      params.category = label(table, found.category, lang);
    }
    if (found.variant) {
      params.variant = table.variant_name[en ? "en" : "it"];
    }
    var text = table.messages[found.code][en ? "en" : "it"].replace(/\{(\w+)\}/g, function (_m, name) {
      return String(params[name]);
    });
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  // ------------------------------------------------------------------ the match (judge_sheet)

  function leaders(totals) {
    var best = Math.max.apply(null, totals);
    return totals.map(function (_t, side) {
      return side;
    }).filter(function (side) {
      return totals[side] === best;
    });
  }

  function margin(totals, winner) {
    if (winner === null) {
      return 0;
    }
    var others = totals.filter(function (_t, side) {
      return side !== winner;
    });
    return others.length ? Math.max(0, totals[winner] - Math.max.apply(null, others)) : 0;
  }

  function penaltyWinner(totals, offender) {
    var others = totals.map(function (_t, side) {
      return side;
    }).filter(function (side) {
      return side !== offender;
    });
    var best = Math.max.apply(null, others.map(function (side) {
      return totals[side];
    }));
    var top = others.filter(function (side) {
      return totals[side] === best;
    });
    return top.length === 1 ? top[0] : null;
  }

  function lastCaptureSurvivor(at, contenders) {
    function when(side) {
      return at[side] === null ? -2 : at[side];
    }
    var order = contenders.slice().sort(function (a, b) {
      return when(a) - when(b);
    });
    if (order.length > 1 && at[order[1]] === at[order[0]]) {
      return null;
    }
    return order[0];
  }

  function Progress(rule, timeUp) {
    this.rule = rule;
    this.timeUp = timeUp;
    this.totals = [];
    for (var side = 0; side < rule.sides; side++) {
      this.totals.push(0);
    }
    this.phase = "regular";
    this.regular = 0;
    this.tiebreaks = 0;
    this.contenders = [];
    this.over = false;
    this.winner = null;
    this.reason = null;
    this.endDeal = null;
    this.needsLastCapture = false;
  }

  Progress.prototype.finish = function (d, winner, reason) {
    this.over = true;
    this.winner = winner;
    this.reason = this.rule.reasons[reason];
    this.endDeal = d;
  };

  Progress.prototype.addPoints = function (points) {
    for (var side = 0; side < this.rule.sides; side++) {
      this.totals[side] += points[side];
    }
  };

  Progress.prototype.addDeal = function (d, tally) {
    // a hand sheet never says who captured: scopa-15's no-capture rule does not apply to it
    this.addPoints(tally.points);
    if (this.over) {
      return;
    }
    if (this.phase === "tiebreak") {
      this.afterTiebreak(d, tally);
      return;
    }
    this.regular += 1;
    var tied = leaders(this.totals);
    var single = tied.length === 1 ? tied[0] : null;
    var rule = this.rule;
    if (rule.target !== null && single !== null && this.totals[single] >= rule.target) {
      this.finish(d, single, "TARGET");
      return;
    }
    if (this.timeUp !== null && d >= this.timeUp) {
      if (single !== null) {
        this.finish(d, single, "TIME_LIMIT");
      } else if (rule.knockout) {
        this.startTiebreaks(tied);
      }
      return;
    }
    if (rule.deals !== null && this.regular >= rule.deals) {
      if (single !== null) {
        this.finish(d, single, "DEALS");
      } else if (rule.knockout) {
        this.startTiebreaks(tied);
      } else {
        this.finish(d, null, "DRAW");
      }
    }
  };

  Progress.prototype.startTiebreaks = function (tied) {
    this.phase = "tiebreak";
    this.contenders = tied;
  };

  Progress.prototype.afterTiebreak = function (d, tally) {
    this.tiebreaks += 1;
    var best = Math.max.apply(null, this.contenders.map(function (side) {
      return tally.points[side];
    }));
    var top = this.contenders.filter(function (side) {
      return tally.points[side] === best;
    });
    if (top.length === 1) {
      this.finish(d, top[0], "TIEBREAK");
      return;
    }
    this.contenders = top;
    if (this.tiebreaks >= this.rule.tiebreak_deals) {
      if (tally.lastCaptureAt === null) {
        this.needsLastCapture = true;
        return;
      }
      this.finish(d, lastCaptureSurvivor(tally.lastCaptureAt, top), "TIEBREAK_LAST_CAPTURE");
    }
  };

  function tally(deal) {
    var known = deal.last_capture !== null && deal.last_capture !== undefined;
    return {
      points: deal.points,
      lastCaptureAt: known
        ? deal.points.map(function (_p, side) {
            return side === deal.last_capture ? 1 : 0;
          })
        : null,
    };
  }

  function problem(code, deal, params) {
    return { ok: false, code: code, deal: deal === undefined ? null : deal, params: params || {} };
  }

  function sheetTimeUp(rule, deals) {
    var regular = deals.filter(function (deal) {
      return !deal.tiebreak;
    });
    var last = regular.length - 1;
    if (rule.knockout || last <= 0) {
      return Math.max(last, 0);
    }
    var running = regular[0].points.map(function () {
      return 0;
    });
    var after = regular.map(function (deal) {
      running = running.map(function (total, side) {
        return total + deal.points[side];
      });
      return running;
    });
    function level(totals) {
      return totals.every(function (total) {
        return total === totals[0];
      });
    }
    var first = last;
    while (first > 0 && level(after[first - 1])) {
      first -= 1;
    }
    return first;
  }

  function overBefore(match, index) {
    var end = match.endDeal !== null ? match.endDeal : index - 1;
    var h = match.totals[0];
    var a = match.totals[1];
    if (match.phase === "tiebreak") {
      return problem("tiebreak_decided_early", end, { n: match.tiebreaks, h: h, a: a });
    }
    return problem("over_before", end, { n: end + 1, h: h, a: a, next: index + 1 });
  }

  function notFinished(match, rule, timeExpired, tiebreakAt) {
    var h = match.totals[0];
    var a = match.totals[1];
    if (match.phase === "tiebreak") {
      if (match.tiebreaks === 0) {
        return problem("knockout_level", null, { n: rule.tiebreak_deals });
      }
      return problem("tiebreak_level", null, { n: match.tiebreaks });
    }
    if (tiebreakAt !== null && !match.over) {
      return problem("tiebreak_not_level", tiebreakAt, { n: tiebreakAt + 1, h: h, a: a });
    }
    if (rule.deals !== null && match.regular < rule.deals && !timeExpired) {
      return problem("too_few_deals", null, { n: rule.deals, got: match.regular });
    }
    if (timeExpired && h === a) {
      return problem("level_when_time_ran_out", null, { h: h, a: a });
    }
    if (rule.target !== null && h === a && h >= rule.target) {
      return problem("level_at_target", null, { h: h, a: a });
    }
    return problem("not_finished", null, { target: rule.target !== null ? rule.target : 0, h: h, a: a });
  }

  function decided(match, winner, reason, endDeal) {
    return {
      ok: true,
      totals: match.totals,
      winner: winner,
      margin: margin(match.totals, winner),
      reason: reason,
      end_deal: endDeal,
    };
  }

  function judgeInterrupted(rule, deals, outcome, offender) {
    if (offender === null || offender === undefined || !(offender >= 0 && offender < rule.sides)) {
      return problem("offender_missing");
    }
    var last = deals[deals.length - 1];
    if (!last.penalty) {
      return problem("penalty_missing");
    }
    for (var side = 0; side < rule.sides; side++) {
      if (side !== offender && last.points[side] < 1) {
        return problem("penalty_without_scopa");
      }
    }
    var match = new Progress(rule, null);
    for (var index = 0; index < deals.length - 1; index++) {
      var deal = deals[index];
      if (Boolean(deal.tiebreak) !== (match.phase === "tiebreak")) {
        var code = match.phase === "tiebreak" ? "tiebreak_expected" : "tiebreak_not_level";
        return problem(code, index, { n: index + 1 });
      }
      match.addDeal(index, tally(deal));
      if (match.over || match.needsLastCapture) {
        return problem("over_before", index, { n: index + 1, h: match.totals[0], a: match.totals[1], next: index + 2 });
      }
    }
    match.addPoints(last.points);
    var winner = penaltyWinner(match.totals, offender);
    var reason = rule.reasons[outcome === "timeout" ? "TIMEOUT" : "ABANDON"];
    return decided(match, winner, reason, deals.length - 1);
  }

  function judgeSheet(rule, deals, outcome, offender, timeExpired) {
    outcome = outcome || "completed";
    if (!deals.length) {
      return problem("no_deals");
    }
    var seenTiebreak = false;
    var penalties = [];
    for (var i = 0; i < deals.length; i++) {
      if (seenTiebreak && !deals[i].tiebreak) {
        return problem("regular_after_tiebreak", i, { n: i + 1 });
      }
      seenTiebreak = seenTiebreak || Boolean(deals[i].tiebreak);
      if (deals[i].penalty) {
        penalties.push(i);
      }
    }
    if (seenTiebreak && !rule.knockout) {
      return problem("tiebreak_not_knockout");
    }
    if (penalties.length && outcome === "completed") {
      return problem("penalty_without_offence");
    }
    if (penalties.length > 1 || (penalties.length && penalties[0] !== deals.length - 1)) {
      return problem("penalty_not_last");
    }
    if (outcome !== "completed") {
      return judgeInterrupted(rule, deals, outcome, offender);
    }
    var match = new Progress(rule, timeExpired ? sheetTimeUp(rule, deals) : null);
    for (var index = 0; index < deals.length; index++) {
      var deal = deals[index];
      if (match.over) {
        return overBefore(match, index);
      }
      if (deal.tiebreak && match.phase !== "tiebreak") {
        return notFinished(match, rule, timeExpired, index);
      }
      if (!deal.tiebreak && match.phase === "tiebreak") {
        return problem("tiebreak_expected", index, { n: index + 1 });
      }
      match.addDeal(index, tally(deal));
      if (match.needsLastCapture) {
        return problem("last_capture_missing", index, { n: index + 1 });
      }
    }
    if (!match.over) {
      return notFinished(match, rule, timeExpired, null);
    }
    return decided(match, match.winner, match.reason, match.endDeal);
  }

  // ------------------------------------------------------------------ the page (sheet_progress)

  function say(template, params) {
    return template.replace(/%\((\w+)\)[ds]/g, function (_m, name) {
      return String(params[name]);
    });
  }

  function whole(value) {
    // reports._number and reading._as_int: a JSON whole number, or a string of digits only
    if (typeof value === "number") {
      return Number.isInteger(value) ? value : null;
    }
    var text = typeof value === "string" ? value.trim() : "";
    return /^\d+$/.test(text) ? parseInt(text, 10) : null;
  }

  // The typed deals as the server reads them (reports.deals_payload, then parse_deals): blank
  // deals dropped, empty cells left out; a side whose cells are not all whole numbers, or that
  // adds up to more than a deal scores, is refused with the server's sentence.
  function readTyped(referee, typed) {
    var words = referee.sentences;
    var deals = [];
    for (var t = 0; t < typed.length; t++) {
      var raw = typed[t] || {};
      var rows = [0, 1].map(function (side) {
        var cells = (raw.breakdown || [])[side] || {};
        var row = {};
        Object.keys(cells).forEach(function (key) {
          if (cells[key] !== "" && cells[key] !== null && cells[key] !== undefined) {
            row[key] = whole(cells[key]);
          }
        });
        return row;
      });
      if (!Object.keys(rows[0]).length && !Object.keys(rows[1]).length) {
        continue;
      }
      var what = say(words.points, { deal: say(words.deal, { n: deals.length + 1 }) });
      var points = [];
      for (var side = 0; side < 2; side++) {
        var values = Object.keys(rows[side]).map(function (key) {
          return rows[side][key];
        });
        if (values.indexOf(null) !== -1) {
          return { error: say(words.not_whole, { what: what }) };
        }
        if (sum(values) > referee.max_points) {
          return { error: say(words.too_big, { what: what, value: sum(values), max: referee.max_points }) };
        }
        points.push(sum(values));
      }
      var clean = rows.map(function (row) {
        var kept = {};
        Object.keys(row).forEach(function (key) {
          if (row[key]) {
            kept[key] = row[key];
          }
        });
        return kept;
      });
      var lastCapture = raw.last_capture;
      deals.push({
        points: points,
        breakdown: clean,
        tiebreak: Boolean(raw.tiebreak),
        penalty: false,
        last_capture: [0, 1, "0", "1"].indexOf(lastCapture) !== -1 ? parseInt(lastCapture, 10) : null,
      });
    }
    return { deals: deals };
  }

  function progress(referee, typed, timeExpired) {
    var words = referee.sentences;
    var read = readTyped(referee, typed || []);
    if (read.error) {
      return { ok: false, error: read.error };
    }
    var deals = read.deals;
    for (var index = 0; index < deals.length; index++) {
      var found = checkDeal(referee.table, deals[index]);
      if (found.length) {
        var sentences = found.slice(0, 3).map(function (one) {
          return message(referee.table, one, referee.lang, referee.names);
        });
        return { ok: false, error: say(words.deal, { n: index + 1 }) + ": " + sentences.join("; ") + "." };
      }
    }
    var totals = [0, 1].map(function (side) {
      return sum(deals.map(function (deal) {
        return deal.points[side];
      }));
    });
    var judged = judgeSheet(referee.rule, deals, "completed", null, Boolean(timeExpired && referee.time_limited));
    if (!judged.ok) {
      var template = words.problems[judged.code];
      if (Array.isArray(template)) {
        template = template[judged.params.got === 1 ? 0 : 1];
      }
      var sentence = say(template, judged.params);
      if (referee.ongoing.indexOf(judged.code) === -1) {
        return { ok: false, error: sentence };
      }
      return {
        ok: true,
        totals: totals,
        over: false,
        winner: null,
        sentence: sentence,
        next_tiebreak: judged.code === "knockout_level" || judged.code === "tiebreak_level",
        needs_last_capture: judged.code === "last_capture_missing",
        deals: deals.length,
      };
    }
    var over =
      judged.winner === null
        ? say(words.draw, { h: totals[0], a: totals[1] })
        : say(words.win, { line: referee.names[judged.winner], h: judged.totals[0], a: judged.totals[1] });
    return {
      ok: true,
      totals: totals,
      over: true,
      winner: judged.winner,
      sentence: over,
      next_tiebreak: false,
      needs_last_capture: false,
      deals: deals.length,
    };
  }

  return { checkDeal: checkDeal, message: message, judgeSheet: judgeSheet, progress: progress };
});
