{% load static %}/* The players' sheet offline: the service worker of /p/ (scoresheets/views.py, service_worker).
 *
 * It caches ONLY the app shell (the static files listed below) and the pages of the links this
 * phone opened, at their tokenless addresses (/p/k<id>/ and /p/k<id>/m/<match>/: no card's
 * token ever sits in the cache); it never caches an answer of the check,
 * sync or status calls, nor anything outside /p/ and the shell. Pages: network first (a few
 * seconds at most, then the copy: a hall's Wi-Fi hangs more often than it fails); the shell:
 * the copy first. The sheet itself lives in IndexedDB (table-store.js), not here.
 *
 * Background sync: a page with a sheet queued registers the tag "scopa-outbox" (table-app.js)
 * where the browser has it (Chromium); the browser then wakes this worker when the network is
 * back, even with no page open, and the worker sends the outbox itself (table-outbox.js, the
 * pages' own code). Still queued after the try (no network, a busy server): the sync fails and
 * the browser tries again later. Then every open page of the app is told to show the news. */
"use strict";
var CACHE = "scopa-table-{{ version }}";
var SHELL = [
  "{% static 'css/site.css' %}",
  "{% static 'css/table.css' %}",
  "{% static 'js/site.js' %}",
  "{% static 'js/table-store.js' %}",
  "{% static 'js/table-outbox.js' %}",
  "{% static 'js/sheet-referee.js' %}",
  "{% static 'js/table-sheet.js' %}",
  "{% static 'js/table-app.js' %}",
  "{% static 'vendor/htmx-2.0.11.min.js' %}",
  "{% static 'img/table-icon.svg' %}"
];
var SYNC_TAG = "scopa-outbox";
importScripts("{% static 'js/table-store.js' %}", "{% static 'js/table-outbox.js' %}");
var PAGE = /^\/p\/k\d+\/(m\/\d+\/)?$/; // the tokenless addresses only (keychain.py)
var WAIT_MS = 4000;

self.addEventListener("install", function (event) {
  event.waitUntil(
    caches.open(CACHE).then(function (cache) {
      return cache.addAll(SHELL);
    }).then(function () {
      return self.skipWaiting();
    })
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(
    caches.keys().then(function (names) {
      return Promise.all(names.filter(function (name) {
        return name.indexOf("scopa-table-") === 0 && name !== CACHE;
      }).map(function (name) {
        return caches.delete(name);
      }));
    }).then(function () {
      return self.clients.claim();
    })
  );
});

function fromNetwork(request) {
  return new Promise(function (resolve, reject) {
    var timer = setTimeout(function () {
      reject(new Error("slow"));
    }, WAIT_MS);
    fetch(request).then(function (response) {
      clearTimeout(timer);
      resolve(response);
    }, function (error) {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function page(request) {
  return fromNetwork(request).then(function (response) {
    if (response.ok && response.type === "basic") {
      var copy = response.clone();
      caches.open(CACHE).then(function (cache) {
        cache.put(request, copy);
      });
    }
    return response;
  }).catch(function () {
    return caches.open(CACHE).then(function (cache) {
      return cache.match(request, { ignoreSearch: true });
    }).then(function (copy) {
      return copy || Response.error();
    });
  });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET") {
    return;
  }
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) {
    return;
  }
  if (PAGE.test(url.pathname) && request.mode === "navigate") {
    event.respondWith(page(request));
  } else if (SHELL.indexOf(url.pathname) !== -1) {
    event.respondWith(caches.match(request).then(function (copy) {
      return copy || fetch(request);
    }));
  }
});


function sendOutbox() {
  return self.ScopaOutboxSend.sendQueued(self.ScopaTableStore).then(function (left) {
    return self.clients.matchAll({ type: "window" }).then(function (pages) {
      pages.forEach(function (page) {
        page.postMessage({ type: "scopa-outbox" });
      });
      if (left) {
        throw new Error("still queued: the browser tries again later");
      }
    });
  });
}

self.addEventListener("sync", function (event) {
  if (event.tag === SYNC_TAG) {
    event.waitUntil(sendOutbox());
  }
});
