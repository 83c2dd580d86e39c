/* Live pages without polling: a WebSocket per tournament page (live/consumers.py) says when a
 * result comes into force or a stage changes, and the page refreshes its #live fragment through
 * htmx at once. While the socket is connected the periodic poll is skipped; when it is not
 * (no WebSocket server, a proxy that drops it, the network gone) the poll runs as before. */
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !live.dataset.liveSocket || !window.WebSocket) {
    return;
  }
  var connected = false;
  var pushing = false;
  var retryMs = 1000;

  live.addEventListener("htmx:beforeRequest", function (event) {
    if (connected && !pushing) {
      event.preventDefault(); // the socket keeps this page fresh: no need to poll
    }
  });
  live.addEventListener("htmx:afterRequest", function () {
    pushing = false;
  });

  function refresh() {
    if (!window.htmx) {
      return;
    }
    pushing = true;
    window.htmx.ajax("GET", live.getAttribute("hx-get"), {
      source: live,
      target: live,
      swap: "innerHTML",
    });
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + live.dataset.liveSocket);
    socket.addEventListener("open", function () {
      var wasDown = !connected;
      connected = true;
      retryMs = 1000;
      if (wasDown) {
        refresh(); // anything missed while the socket was down
      }
    });
    socket.addEventListener("message", function () {
      refresh();
    });
    socket.addEventListener("close", function () {
      connected = false; // polling takes over until the socket is back
      window.setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 30000);
    });
  }

  connect();
})();
