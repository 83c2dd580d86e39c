/* Runs the outbox's sending (public/static/js/table-outbox.js, the very file the pages and the
 * service worker load) against answers scripted by tests/scoresheets/test_outbox_js.py.
 *
 *   node run_outbox.js <table-outbox.js> <cases.json>   -> per case, the record and the requests
 *
 * A case is the sheet's outbox status at the start ("queued", or "blocked") and the answers the
 * network gives, in order: {"status", "body", "type"}; "down" (no network); "lost" (the server
 * gets the sheet, the phone hears nothing back); "ok" (the server gets it and answers that it
 * waits for the other line). The store is a map in memory; the sheet is sent as a page sends
 * it (`send`), then by `sendQueued` (as the service worker and the page's timer do) while it is
 * queued and answers are left. With "mended", the network is perfect once the answers run out
 * and a page of the app is opened again whenever the sheet is blocked, until it is sent.
 * "arrived" lists the client keys the server got. */
"use strict";
var fs = require("fs");
var path = require("path");

globalThis.self = globalThis;
require(path.resolve(process.argv[2]));
var cases = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
var WAITING = '{"ok": true, "status": "waiting"}';

function run(item) {
  var answers = item.answers.slice();
  var records = {};
  var requests = [];
  var arrived = [];
  var store = {
    put: function (key, value) {
      records[key] = JSON.parse(JSON.stringify(value));
      return Promise.resolve();
    },
    all: function () {
      return Promise.resolve(
        Object.keys(records).map(function (key) {
          return JSON.parse(JSON.stringify(records[key]));
        })
      );
    },
  };
  globalThis.fetch = function (url, options) {
    var body = options && options.body ? JSON.parse(options.body) : null;
    var method = (options && options.method) || "GET";
    requests.push({ method: method, url: url, body: body });
    var next = answers.length ? answers.shift() : item.mended ? "ok" : "down";
    if (next === "ok" || next === "lost") {
      if (method === "POST") {
        arrived.push(body.client_key);
      }
      next = next === "lost" ? "down" : { status: 200, type: "application/json", body: WAITING };
    }
    if (next === "down") {
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
  var rounds = item.answers.length + 3;

  function again() {
    var status = records[record.key].outbox.status;
    rounds -= 1;
    if (rounds < 0) {
      return Promise.resolve();
    }
    if (status === "queued" && (answers.length || item.mended)) {
      return self.ScopaOutboxSend.sendQueued(store).then(again);
    }
    if (status === "blocked" && item.mended) {
      return self.ScopaOutboxSend.send(store, records[record.key]).then(again); // a page opened
    }
    return Promise.resolve();
  }

  return store
    .put(record.key, record)
    .then(function () {
      return self.ScopaOutboxSend.send(store, records[record.key]);
    })
    .then(again)
    .then(function () {
      return { record: records[record.key], requests: requests, arrived: arrived };
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
