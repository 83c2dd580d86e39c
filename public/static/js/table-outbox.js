/* Sending the outbox: one function used both by the pages (table-app.js, while a page of the
 * app is open) and by the service worker (background sync, with no page open; see
 * scoresheets/templates/scoresheets/app/sw.js). Each queued record of table-store.js is sent to
 * its sync URL with its own client key (the server stores it once whatever the repetitions) and
 * the record is updated with the answer: where the sheet stands, or a refusal for the player or
 * the referee; without an answer (no network, a busy server, a hotel's login page answering in
 * its place) it stays queued, one try more.
 *
 * The sync call needs no CSRF token (scoresheets/views.py, _from_this_site): the card is its
 * credential. A refusal nobody can read (an HTML 403 from something between the phone and the
 * site, or a server of an older release checking a token that rotated) is not a lost
 * connection: the sheet's page is fetched again (fresh cookies) and the sheet resent once, with
 * the same key; refused again, or refused because this phone no longer holds the card (403),
 * the record is "blocked": the page says plainly to reopen the card's link, and every page of
 * the app opened later sends it again. `sendQueued` resolves with the count still queued. */
(function () {
  "use strict";

  function post(record) {
    var outbox = record.outbox;
    return self.fetch(record.sync_url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
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
    });
  }

  function read(response) {
    // the answer and, when it is the site's own JSON, what it says (null: unreadable)
    return response.text().then(function (text) {
      var answer = null;
      try {
        answer = JSON.parse(text);
      } catch (e) {
        answer = null;
      }
      return { status: response.status, answer: answer && typeof answer === "object" ? answer : null };
    });
  }

  function busy(status) {
    return status === 408 || status === 429 || status >= 500 || status < 400;
  }

  function pageOf(record) {
    return record.page_url || record.sync_url.replace(/sync\/$/, "");
  }

  function refresh(record) {
    // the sheet's page again: the server reads the phone's cookies afresh (and sets new ones)
    return self.fetch(pageOf(record), { credentials: "same-origin" }).then(
      function () {},
      function () {}
    );
  }

  function send(store, record) {
    var outbox = record.outbox;

    function once(retried) {
      return post(record)
        .then(read)
        .then(function (result) {
          var answer = result.answer;
          if (!answer && !busy(result.status)) {
            if (!retried) {
              return refresh(record).then(function () {
                return once(true); // the same send again: not one more try
              });
            }
            outbox.status = "blocked";
            outbox.error = "";
            return undefined;
          }
          if (!answer || result.status === 429 || result.status >= 500) {
            outbox.tries += 1; // no answer from the site, or it is busy: still queued
            return undefined;
          }
          if (result.status === 403) {
            // this phone no longer holds the card (scan it again): nothing was read, the code
            // typed stays with the sheet
            outbox.status = "blocked";
            outbox.error = answer.error || "";
            return undefined;
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
          return undefined;
        });
    }

    if (outbox.status === "blocked") {
      outbox.status = "queued"; // sent again from a page of the app
      outbox.error = "";
    }
    return once(false)
      .catch(function () {
        outbox.tries += 1; // no network: queued, sent again later
      })
      .then(function () {
        return store.put(record.key, record);
      });
  }

  function queued(record) {
    return Boolean(record && record.outbox && record.outbox.status === "queued");
  }

  function sendQueued(store) {
    return store
      .all()
      .then(function (records) {
        return Promise.all(
          records.filter(queued).map(function (record) {
            return send(store, record);
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
