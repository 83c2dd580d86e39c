/* Live pages without polling (live/consumers.py, docs/pages.md "Live pages").
 *
 * The contract: any element on any page opts in with two attributes,
 *
 *   <div id="some-id" hx-get="/url/of/this/fragment/" data-live-socket="/ws/t/<slug>/"
 *        hx-trigger="every 15s" hx-swap="innerHTML">…</div>
 *
 *   data-live-socket  the WebSocket path to listen to: /ws/t/<slug>/ for a tournament's public
 *                     pages, /ws/desk/<slug>/ for its desk (organizers and referees only);
 *   hx-get            the URL to fetch when told; asked with htmx's HX-Request header it must
 *                     answer with the element's new inner HTML (the fragment, not the page);
 *   hx-trigger        optional: htmx's polling, kept as the fallback while the socket is down;
 *   data-live-on      optional: the kinds of change that refresh it ("result stage log
 *                     record"), space separated; every kind when absent.
 *
 * The page loads this script (and htmx). One socket is opened per path, shared by the elements
 * that name it; each message refreshes them at once. While the socket is connected their polls
 * are skipped; when it is not (no WebSocket server, a proxy that drops it, the network gone) they
 * poll as before, and on reconnecting they refresh once for anything missed. A burst of
 * messages costs one request in flight per element plus one after it. An element where a form
 * field has the focus or has been edited is not swapped under the user's hands: the refresh
 * waits for the focus to leave (an edited form waits for its submission). Each element's
 * data-live-state says "push" or "poll" (tests and styles read it). */
(function () {
  "use strict";
  if (!window.WebSocket) {
    return;
  }
  var FIELDS = /^(INPUT|SELECT|TEXTAREA)$/;
  var sockets = {}; // path -> [elements]

  function busy(el) {
    var active = document.activeElement;
    return el.dataset.liveEdited === "1" || (active && el.contains(active) && FIELDS.test(active.tagName));
  }

  function refresh(el) {
    if (!window.htmx) {
      return;
    }
    if (el._liveInFlight || busy(el)) {
      el._liveAgain = true; // after the request in flight, or when the user is done
      return;
    }
    el._liveAgain = false;
    el._liveInFlight = true;
    var done = function () {
      el._liveInFlight = false;
      if (el._liveAgain) {
        refresh(el);
      }
    };
    // max-age=0: the pages let the browser reuse an answer for a few seconds, which must not
    // hide the change just announced; the browser asks again (a 304 when nothing changed).
    // htmx.ajax's promise settles once the swap is done (or the request failed or was dropped).
    window.htmx
      .ajax("GET", el.getAttribute("hx-get"), {
        source: el,
        target: el,
        swap: "innerHTML",
        headers: {"Cache-Control": "max-age=0"},
      })
      .then(done, done);
  }

  function wants(el, what) {
    var kinds = el.dataset.liveOn;
    return !kinds || !what || kinds.split(/\s+/).indexOf(what) !== -1;
  }

  function watch(el) {
    el.dataset.liveState = "poll";
    el.addEventListener("htmx:beforeRequest", function (event) {
      if (event.target !== el) {
        return; // a form inside the element asking something of its own
      }
      if (!el._liveInFlight && (el.dataset.liveState === "push" || busy(el))) {
        event.preventDefault(); // a poll: the socket keeps the element fresh, or the user is busy
      }
    });
    el.addEventListener("input", function () {
      el.dataset.liveEdited = "1";
    });
    el.addEventListener("focusout", function () {
      window.setTimeout(function () {
        if (el._liveAgain && !busy(el)) {
          refresh(el);
        }
      }, 0);
    });
  }

  function connect(path, elements, retryMs) {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + path);
    var opened = false;
    socket.addEventListener("open", function () {
      opened = true;
      elements.forEach(function (el) {
        el.dataset.liveState = "push";
        refresh(el); // anything missed while the socket was down
      });
    });
    socket.addEventListener("message", function (event) {
      var what = "";
      try {
        what = JSON.parse(event.data).what || "";
      } catch (ignored) {
        // not ours: refresh anyway
      }
      elements.forEach(function (el) {
        if (wants(el, what)) {
          refresh(el);
        }
      });
    });
    socket.addEventListener("close", function () {
      elements.forEach(function (el) {
        el.dataset.liveState = "poll"; // polling takes over until the socket is back
      });
      var wait = opened ? 1000 : retryMs;
      window.setTimeout(function () {
        connect(path, elements, Math.min(wait * 2, 30000));
      }, wait);
    });
  }

  document.querySelectorAll("[data-live-socket][hx-get]").forEach(function (el) {
    var path = el.dataset.liveSocket;
    (sockets[path] = sockets[path] || []).push(el);
    watch(el);
  });
  Object.keys(sockets).forEach(function (path) {
    connect(path, sockets[path], 1000);
  });
})();
