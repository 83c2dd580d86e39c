/* Live pages without polling (live/consumers.py, docs/pages.md "Live pages").
 *
 * The contract: any element on any page opts in with two attributes,
 *
 *   <div id="some-id" hx-get="/url/of/this/fragment/" data-live-socket="/ws/t/<slug>/"
 *        hx-trigger="every 15s" hx-swap="innerHTML">…</div>
 *
 *   data-live-socket  the WebSocket path to listen to: /ws/t/<slug>/ for a tournament's public
 *                     pages, /ws/desk/<slug>/ for its desk (organizers and referees only); the
 *                     page's language (<html lang>) is added as ?lang=;
 *   hx-get            the URL to fetch when told; asked with htmx's HX-Request header it must
 *                     answer with the element's new inner HTML (the fragment, not the page);
 *   hx-trigger        optional: "every Ns", the poll kept as the fallback while the socket is
 *                     down (run by this script, at a jittered interval, as conditional requests);
 *   data-live-on      optional: the kinds of change that refresh it ("result stage log
 *                     record"), space separated; every kind when absent;
 *   data-live-version optional: the version the content is at (the X-Live-Version header of
 *                     each answer updates it); a pushed result carries the version it brings;
 *   data-live-patch   optional: the content is only rows that a pushed result carries (by id):
 *                     they are swapped in place, no request. A gap in the versions (a message
 *                     missed) or a result without rows makes the element fetch itself once.
 *
 * The page loads this script (and htmx). One socket is opened per path, shared by the elements
 * that name it. While the socket is connected the polls are skipped; when it is not they poll,
 * and on reconnecting (after a jittered, growing wait, so a restarted server is not hit by every
 * screen at once) they refresh once for anything missed. A burst of messages costs one request
 * in flight per element plus one after it. An element where a form field has the focus or has
 * been edited is not swapped under the user's hands: the refresh waits for the focus to leave
 * (an edited form waits for its submission). Each element's data-live-state says "push" or
 * "poll" (tests and styles read it). */
(function () {
  "use strict";
  if (!window.WebSocket) {
    return;
  }
  var FIELDS = /^(INPUT|SELECT|TEXTAREA)$/;
  var sockets = {}; // path -> [elements]

  function jitter(ms) {
    return ms * (0.5 + Math.random()); // 0.5x to 1.5x: screens spread out instead of in step
  }

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

  function patch(el, rows) {
    // every row first, then swap: a row missing from this page (another round's) is fine
    rows.forEach(function (row) {
      var old = document.getElementById(row.id);
      if (old && el.contains(old)) {
        var holder = document.createElement("tbody");
        holder.innerHTML = row.html;
        if (holder.firstElementChild) {
          old.replaceWith(holder.firstElementChild);
        }
      }
    });
  }

  function heard(el, message) {
    if (!wants(el, message.what)) {
      return;
    }
    var have = parseInt(el.dataset.liveVersion, 10);
    if (typeof message.v === "number" && !isNaN(have)) {
      if (message.v <= have) {
        return; // the content already shows it (fetched after it)
      }
      var patchable = el.hasAttribute("data-live-patch") && Array.isArray(message.rows);
      if (patchable && message.v === have + 1 && !el._liveInFlight && !busy(el)) {
        patch(el, message.rows);
        el.dataset.liveVersion = String(message.v);
        return;
      }
    }
    refresh(el); // a gap, a page made of more than rows, or a change without a version
  }

  function pollEvery(el) {
    var found = /every\s+(\d+(?:\.\d+)?)(ms|s)/.exec(el.getAttribute("hx-trigger") || "");
    if (!found) {
      return 0;
    }
    return parseFloat(found[1]) * (found[2] === "s" ? 1000 : 1);
  }

  function schedulePoll(el) {
    var every = pollEvery(el);
    if (!every || el._livePoll) {
      return;
    }
    el._livePoll = window.setTimeout(function () {
      el._livePoll = null;
      if (el.dataset.liveState === "poll") {
        if (!busy(el)) {
          pollOnce(el);
        }
        schedulePoll(el);
      }
    }, jitter(every));
  }

  function pollOnce(el) {
    if (el._liveInFlight) {
      return;
    }
    el._liveInFlight = true;
    var done = function () {
      el._liveInFlight = false;
    };
    // no max-age=0 here: the browser revalidates with If-None-Match (a 304 when unchanged)
    window.htmx
      .ajax("GET", el.getAttribute("hx-get"), {source: el, target: el, swap: "innerHTML"})
      .then(done, done);
  }

  function watch(el) {
    el.dataset.liveState = "poll";
    el.addEventListener("htmx:beforeRequest", function (event) {
      if (event.target !== el) {
        return; // a form inside the element asking something of its own
      }
      if (!el._liveInFlight) {
        event.preventDefault(); // htmx's own poll: this script polls, jittered, when needed
      }
    });
    el.addEventListener("htmx:afterRequest", function (event) {
      var xhr = event.detail && event.detail.xhr;
      var version = xhr && xhr.getResponseHeader("X-Live-Version");
      if (event.target === el && version && event.detail.successful) {
        el.dataset.liveVersion = version;
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
    schedulePoll(el);
  }

  function socketUrl(path) {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var lang = document.documentElement.lang || "";
    var sep = path.indexOf("?") === -1 ? "?" : "&";
    return scheme + window.location.host + path + (lang ? sep + "lang=" + encodeURIComponent(lang) : "");
  }

  function connect(path, elements, backoffMs) {
    var socket = new WebSocket(socketUrl(path));
    var opened = false;
    socket.addEventListener("open", function () {
      opened = true;
      elements.forEach(function (el) {
        el.dataset.liveState = "push";
        refresh(el); // anything missed while the socket was down (a 304 when nothing was)
      });
    });
    socket.addEventListener("message", function (event) {
      var message = {};
      try {
        message = JSON.parse(event.data) || {};
      } catch (ignored) {
        // not ours: refresh anyway
      }
      elements.forEach(function (el) {
        heard(el, message);
      });
    });
    socket.addEventListener("close", function () {
      elements.forEach(function (el) {
        el.dataset.liveState = "poll"; // polling takes over until the socket is back
        schedulePoll(el);
      });
      // a socket that was open starts again from 1 s; each failed attempt doubles the wait
      var wait = opened ? 1000 : backoffMs;
      window.setTimeout(function () {
        connect(path, elements, Math.min(wait * 2, 30000));
      }, jitter(wait));
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
