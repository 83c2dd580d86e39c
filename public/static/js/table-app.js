/* Every players' page (scoresheets/templates/scoresheets/base_table.html): the service worker,
 * and the outbox.
 *
 * The outbox is the records of table-store.js whose "outbox.status" is "queued": a finished
 * sheet, sent to its sync URL whenever a page of the app is open and the network answers
 * (at once, when the browser says it is back online, and every few seconds meanwhile), as many
 * times as needed, always with the sheet's own client key: the server stores it once whatever
 * the repetitions (scoresheets/services/offline.py); the sending itself is table-outbox.js.
 * Where the browser has background sync (Chromium), a queued sheet also registers the sync tag
 * "scopa-outbox": the service worker then sends the outbox when the network is back, with no
 * page open. Browsers without it (iOS) send only while a page is open: the status line says so. A sent sheet's record then follows
 * where it stands ("waiting" and "referee" are asked again now and then) until it is
 * countersigned or settled. A "blocked" sheet (refused in a way that needs the player: the card
 * opened again; table-outbox.js) is sent again with those questions, at a page's opening and every
 * few seconds while one is open. The status line (#outbox-status) words it with the page's
 * translated sentences. */
(function () {
  "use strict";
  var store = window.ScopaTableStore;
  var box = document.getElementById("outbox-status");
  var RETRY_MS = 8000;
  var POLL_MS = 15000;
  var busy = false;
  var SYNC_TAG = "scopa-outbox";
  var syncs = "serviceWorker" in navigator && "SyncManager" in window && Boolean(navigator.serviceWorker.controller);

  if (box && box.dataset.here && box.dataset.here !== window.location.pathname && window.history.replaceState) {
    // the card's token leaves the address bar: this page's address without it (keychain.py)
    window.history.replaceState(null, "", box.dataset.here + window.location.search);
  }
  if ("serviceWorker" in navigator && box && box.dataset.worker) {
    navigator.serviceWorker.register(box.dataset.worker, { scope: box.dataset.worker.replace(/[^/]*$/, "") }).catch(
      function () {
        /* no service worker (not HTTPS): the page still works online */
      }
    );
  }
  if (!store || !box || !window.ScopaOutboxSend) {
    return;
  }

  function sentence(record) {
    var outbox = record && record.outbox;
    if (!outbox) {
      return "";
    }
    var text = box.dataset["t" + outbox.status.charAt(0).toUpperCase() + outbox.status.slice(1).replace(/_(\w)/g, function (_m, c) {
      return c.toUpperCase();
    })] || "";
    if (outbox.status === "queued" && syncs && box.dataset.tQueuedSync) {
      text = box.dataset.tQueuedSync; // the worker sends it, page open or not
    }
    if (outbox.error) {
      text = outbox.error + (text ? " " + text : "");
    }
    return text;
  }

  function show(records) {
    var mine = box.dataset.storageKey;
    var shown = records.filter(function (record) {
      return mine ? record.key === mine : waiting(record);
    })[0];
    var text = sentence(shown);
    box.hidden = !text;
    box.textContent = text;
    box.dataset.status = shown && shown.outbox ? shown.outbox.status : "";
    document.dispatchEvent(new CustomEvent("scopa:outbox", { detail: shown || null }));
  }

  function waiting(record) {
    // still to be sent: queued, or blocked (sent again from any page of the app opened)
    var status = record && record.outbox && record.outbox.status;
    return status === "queued" || status === "blocked";
  }

  function send(record) {
    return window.ScopaOutboxSend.send(store, record);
  }

  function askForSync() {
    // background sync (Chromium): the service worker sends the outbox when the network is
    // back, even with no page of the app open; elsewhere the page's own path below does it
    if (!("serviceWorker" in navigator) || !("SyncManager" in window)) {
      return;
    }
    navigator.serviceWorker.ready
      .then(function (registration) {
        return registration.sync.register(SYNC_TAG);
      })
      .catch(function () {
        /* not allowed here: the page sends it while open */
      });
  }

  function poll(record) {
    if (!record.status_url) {
      return Promise.resolve();
    }
    return window
      .fetch(record.status_url + "?key=" + encodeURIComponent(record.client_key), {
        credentials: "same-origin",
      })
      .then(function (response) {
        return response.json();
      })
      .then(function (answer) {
        if (answer.ok && answer.status !== record.outbox.status) {
          record.outbox.status = answer.status;
          return store.put(record.key, record);
        }
        return undefined;
      })
      .catch(function () {});
  }

  function flush(polling) {
    if (busy) {
      return Promise.resolve();
    }
    busy = true;
    return store
      .all()
      .then(function (records) {
        var work = records
          .filter(function (record) {
            var status = record.outbox && record.outbox.status;
            return (
              status === "queued" ||
              (polling && (status === "blocked" || status === "waiting" || status === "referee"))
            );
          })
          .map(function (record) {
            return waiting(record) ? send(record) : poll(record);
          });
        return Promise.all(work);
      })
      .then(store.all)
      .then(function (records) {
        busy = false;
        if (records.some(window.ScopaOutboxSend.queued)) {
          askForSync();
        }
        show(records);
      }, function () {
        busy = false;
      });
  }

  window.ScopaOutbox = { flush: flush };
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.addEventListener("message", function (event) {
      if (event.data && event.data.type === "scopa-outbox") {
        flush(false); // the service worker sent the outbox: show where the sheets stand
      }
    });
  }
  window.addEventListener("online", function () {
    flush(false);
  });
  window.setInterval(function () {
    flush(false);
  }, RETRY_MS);
  window.setInterval(function () {
    if (!document.hidden) {
      flush(true);
    }
  }, POLL_MS);
  flush(true);
})();
