/* Sending the outbox: one function used both by the pages (table-app.js, while a page of the
 * app is open) and by the service worker (background sync, with no page open; see
 * scoresheets/templates/scoresheets/app/sw.js). Each queued record of table-store.js is sent to
 * its sync URL with its own client key (the server stores it once whatever the repetitions) and
 * the record is updated with the answer: where the sheet stands, or a refusal for the player or
 * the referee; without an answer (no network, a busy server) it stays queued, one try more.
 * `sendQueued` resolves with the count of records still queued. */
(function () {
  "use strict";

  function send(store, record, csrf) {
    var outbox = record.outbox;
    return self
      .fetch(record.sync_url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf || record.csrf || "" },
        credentials: "same-origin",
        body: JSON.stringify({
          deals: record.sent_deals,
          client_key: record.client_key,
          based_on: record.based_on,
          lines: record.lines,
          time_expired: record.time_expired,
          code: outbox.code || "",
          queued: outbox.tries > 0,
        }),
      })
      .then(function (response) {
        return response.json().then(function (answer) {
          return { status: response.status, answer: answer };
        });
      })
      .then(function (result) {
        var answer = result.answer;
        if (result.status === 429 || result.status >= 500) {
          outbox.tries += 1; // the server is busy: the sheet stays queued
          return store.put(record.key, record);
        }
        outbox.code = "";
        if (answer.ok) {
          outbox.status = answer.status;
          outbox.error = "";
        } else if (result.status === 409) {
          outbox.status = "kept";
          outbox.error = answer.error;
        } else if (answer.status === "wrong_code") {
          outbox.status = "wrong_code";
          outbox.error = answer.error;
        } else {
          outbox.status = "refused";
          outbox.error = answer.error;
        }
        return store.put(record.key, record);
      })
      .catch(function () {
        outbox.tries += 1; // no network: queued, sent again later
        return store.put(record.key, record);
      });
  }

  function queued(record) {
    return Boolean(record && record.outbox && record.outbox.status === "queued");
  }

  function sendQueued(store, csrf) {
    return store
      .all()
      .then(function (records) {
        return Promise.all(
          records.filter(queued).map(function (record) {
            return send(store, record, csrf);
          })
        );
      })
      .then(store.all)
      .then(function (records) {
        return records.filter(queued).length;
      });
  }

  self.ScopaOutboxSend = { send: send, sendQueued: sendQueued, queued: queued };
})();
