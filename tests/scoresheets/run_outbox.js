/* Runs the outbox's sending (public/static/js/table-outbox.js, the very file the pages and the
 * service worker load) against answers scripted by tests/scoresheets/test_outbox_js.py.
 *
 *   node run_outbox.js <table-outbox.js> <cases.json>   -> per case, the record and the requests
 *
 * A case is the sheet's outbox status at the start ("queued", or "blocked") and the answers the
 * network gives, in order: {"status", "body", "type"} or "down" (no network). The store is a map
 * in memory; the sheet is sent as a page sends it (`send`), then by `sendQueued` (as the
 * service worker and the page's timer do) while it is queued and answers are left. */
"use strict";
var fs = require("fs");
var path = require("path");

globalThis.self = globalThis;
require(path.resolve(process.argv[2]));
var cases = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));

function run(item) {
  var answers = item.answers;
  var records = {};
  var requests = [];
  var store = {
    put: function (key, value) {
      records[key] = JSON.parse(JSON.stringify(value));
      return Promise.resolve();
    },
    all: function () {
      return Promise.resolve(Object.keys(records).map(function (key) {
        return JSON.parse(JSON.stringify(records[key]));
      }));
    },
  };
  globalThis.fetch = function (url, options) {
    var body = options && options.body ? JSON.parse(options.body) : null;
    requests.push({ method: (options && options.method) || "GET", url: url, body: body });
    var next = answers.shift();
    if (next === undefined || next === "down") {
      return Promise.reject(new TypeError("Failed to fetch"));
    }
    return Promise.resolve(
      new Response(next.body, { status: next.status, headers: { "Content-Type": next.type } })
    );
  };
  var record = {
    key: "scopa-table:1:home",
    sync_url: "/p/k1/m/1/sync/",
    page_url: "/p/k1/m/1/",
    client_key: "4f0c3c56-7c43-4c43-9f39-111111111111",
    sent_deals: [{ breakdown: [{ scope: "1" }, {}] }],
    lines: [1, 2],
    based_on: "",
    time_expired: false,
    outbox: { status: item.status, tries: 0, code: "AB12CD", error: "" },
  };
  return store
    .put(record.key, record)
    .then(function () {
      return self.ScopaOutboxSend.send(store, records[record.key]);
    })
    .then(function loop() {
      return self.ScopaOutboxSend.sendQueued(store).then(function (left) {
        return left && answers.length ? loop() : undefined;
      });
    })
    .then(function () {
      return { record: records[record.key], requests: requests };
    });
}

cases
  .reduce(function (done, item) {
    return done.then(function (found) {
      return run(item).then(function (one) {
        return found.concat([one]);
      });
    });
  }, Promise.resolve([]))
  .then(function (found) {
    process.stdout.write(JSON.stringify(found));
  });
