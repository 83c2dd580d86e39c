// Desk helpers without inline scripts: print buttons and the projector's round clock.
(function () {
  "use strict";
  function bindPrint() {
    document.querySelectorAll("[data-print]").forEach(function (button) {
      button.addEventListener("click", function () { window.print(); });
    });
  }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function tick(clock) {
    var start = Date.parse(clock.getAttribute("data-start"));
    var limit = parseInt(clock.getAttribute("data-limit"), 10) * 1000;
    var left = Math.round((start + limit - Date.now()) / 1000);
    if (isNaN(left)) { return; }
    if (left <= 0) {
      clock.textContent = clock.getAttribute("data-over");
      clock.classList.add("over");
      return;
    }
    var h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
    clock.textContent = (h ? h + ":" + pad(m) : String(m)) + ":" + pad(s);
    clock.classList.toggle("last-minutes", left <= 300);
  }
  function bindClocks() {
    document.querySelectorAll("[data-clock]").forEach(function (clock) {
      tick(clock);
      window.setInterval(function () { tick(clock); }, 1000);
    });
  }
  document.addEventListener("DOMContentLoaded", function () { bindPrint(); bindClocks(); });
})();
