/* Runs the phone's port of the deal-sheet referee (public/static/js/sheet-referee.js) on the
 * cases tests/engine/test_sheet_referee_js.py generated from the engine, in one Node process.
 *
 *   node run_sheet_referee.js <module> <cases.json>   -> the verdicts, as JSON, on stdout
 *
 * A "deal" case is one deal for check_deal (with its referee table, by index), answered with
 * each error's code, side, category and sentences; a "sheet" case is a whole sheet for
 * judge_sheet; a "page" case is what the check view reads (sheet_progress). */
"use strict";
var fs = require("fs");
var path = require("path");

var referee = require(path.resolve(process.argv[2]));
var input = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));

function dealVerdict(table, item) {
  return referee.checkDeal(table, item.deal).map(function (found) {
    return {
      code: found.code,
      side: found.side,
      category: found.category,
      it: referee.message(table, found, "it"),
      en: referee.message(table, found, "en"),
      named: referee.message(table, found, "it", item.names),
    };
  });
}

var verdicts = input.cases.map(function (item) {
  if (item.kind === "deal") {
    return dealVerdict(input.tables[item.table], item);
  }
  if (item.kind === "sheet") {
    return referee.judgeSheet(item.rule, item.deals, item.outcome, item.offender, item.time_expired);
  }
  return referee.progress(input.referees[item.referee], item.typed, item.time_expired);
});
process.stdout.write(JSON.stringify(verdicts));
