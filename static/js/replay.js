/* Replay viewer: steps through the engine's timeline (embedded with json_script).
   Keyboard: ←/→ one play, Home/End first/last, PageUp/PageDown one deal. Touch: swipe or buttons.
   Card faces come pre-drawn from the server (tournaments/rendering/cards.py). */
(function () {
  "use strict";
  function init() {
    var root = document.getElementById("replay");
    if (!root || root.dataset.ready) return;
    root.dataset.ready = "1";
    var frames = JSON.parse(document.getElementById("replay-timeline").textContent);
    var faces = JSON.parse(document.getElementById("replay-faces").textContent);
    var seats = [];
    var seatsEl = document.getElementById("replay-seats");
    if (seatsEl) seats = JSON.parse(seatsEl.textContent) || [];
    var L = root.dataset;
    var sideNames = [L.home, L.away];
    var board = root.querySelector(".replay-board");
    var pos = root.querySelector(".replay-pos");
    var moveEl = root.querySelector(".replay-move");
    var slider = root.querySelector("input[type=range]");
    var buttons = {};
    root.querySelectorAll("[data-step]").forEach(function (b) { buttons[b.dataset.step] = b; });
    slider.max = String(frames.length - 1);
    var index = 0;

    function esc(s) { var d = document.createElement("div"); d.textContent = String(s); return d.innerHTML; }
    function face(code, cls) {
      var f = faces[code];
      var svg = f ? f.svg : "<span>" + esc(code) + "</span>";
      return '<span class="cardwrap ' + (cls || "") + '">' + svg + "</span>";
    }
    function cards(list, mark) {
      if (!list || !list.length) return '<span class="empty-note">' + esc(L.lEmpty) + "</span>";
      return list.map(function (c) { return face(c, mark && mark[c] ? mark[c] : ""); }).join("");
    }
    function seatLabel(s, nSides) {
      var name = seats[s] || (L.lSeat + " " + (s + 1));
      var side = sideNames[s % nSides];
      return nSides === 2 && seats.length > 2 ? name + " (" + side + ")" : (seats[s] ? name : side);
    }
    function cardName(c) { return faces[c] ? faces[c].name : c; }

    function render() {
      var f = frames[index];
      var nSides = f.captured.length;
      var sameDeal = frames.filter(function (x) { return x.deal === f.deal; });
      var nPlays = sameDeal.length - 1;
      pos.textContent = L.lDeal + " " + (f.deal + 1) + " · " +
        (f.play === null ? L.lStart : L.lPlay + " " + (f.play + 1) + " " + L.lOf + " " + nPlays);
      slider.value = String(index);
      buttons.first.disabled = buttons.prev.disabled = index === 0;
      buttons.last.disabled = buttons.next.disabled = index === frames.length - 1;
      var mark = {};
      if (f.move) {
        var who = seatLabel(f.move.seat, nSides);
        var text = who + " " + L.lPlays + " " + cardName(f.move.card);
        if (f.move.take && f.move.take.length) {
          text += ", " + L.lTakes + " " + f.move.take.map(cardName).join(" + ");
        } else {
          text += ", " + L.lLays;
          mark[f.move.card] = "played";
        }
        moveEl.innerHTML = esc(text) + (f.move.scopa ? ' <span class="scopa-flash">' + esc(L.lScopa) + "</span>" : "");
      } else {
        moveEl.textContent = L.lStart;
      }
      var html = '<section class="zone table-zone" aria-label="' + esc(L.lTable) + '"><h3><span>' + esc(L.lTable) +
        "</span><span>" + f.deck_left + " " + esc(L.lDeck) + "</span></h3>";
      if (f.move && f.move.take && f.move.take.length) {
        html += '<div class="cards last-capture" aria-label="' + esc(L.lLast) + '">' + face(f.move.card, "played") +
          f.move.take.map(function (c) { return face(c, "taken"); }).join("") + "</div>";
      }
      html += '<div class="cards">' + cards(f.table, mark) + "</div></section>";
      f.hands.forEach(function (hand, s) {
        var side = s % nSides;
        var toMove = f.to_move === s ? " ▶" : "";
        html += '<section class="zone" aria-label="' + esc(L.lHand + ": " + seatLabel(s, nSides)) + '"><h3><span>' +
          esc(seatLabel(s, nSides)) + toMove + "</span></h3>" +
          '<div class="cards">' + cards(hand) + "</div></section>";
      });
      f.captured.forEach(function (pile, side) {
        var name = nSides === 2 ? sideNames[side] : seatLabel(side, nSides);
        html += '<section class="zone pile" aria-label="' + esc(L.lCaptured + ": " + name) + '"><h3><span>' +
          esc(L.lCaptured) + " · " + esc(name) + '</span><span class="pile-count">' + pile.length + " · " +
          esc(L.lScope) + " " + f.scope[side] + "</span></h3>" +
          '<div class="cards">' + cards(pile) + "</div></section>";
      });
      board.innerHTML = html;
    }
    function go(i) { index = Math.max(0, Math.min(frames.length - 1, i)); render(); }
    function dealJump(dir) {
      var d = frames[index].deal + dir;
      for (var i = 0; i < frames.length; i++) if (frames[i].deal === d) return go(i);
      go(dir < 0 ? 0 : frames.length - 1);
    }
    root.addEventListener("click", function (e) {
      var b = e.target.closest("[data-step]");
      if (!b) return;
      var s = b.dataset.step;
      go(s === "first" ? 0 : s === "last" ? frames.length - 1 : index + (s === "next" ? 1 : -1));
    });
    slider.addEventListener("input", function () { go(parseInt(slider.value, 10)); });
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      if (t && (t.tagName === "INPUT" && t.type !== "range" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
      var handled = true;
      switch (e.key) {
        case "ArrowRight": go(index + 1); break;
        case "ArrowLeft": go(index - 1); break;
        case "Home": go(0); break;
        case "End": go(frames.length - 1); break;
        case "PageDown": dealJump(1); break;
        case "PageUp": dealJump(-1); break;
        default: handled = false;
      }
      if (handled) e.preventDefault();
    });
    var x0 = null, y0 = null;
    board.addEventListener("touchstart", function (e) { x0 = e.touches[0].clientX; y0 = e.touches[0].clientY; }, { passive: true });
    board.addEventListener("touchend", function (e) {
      if (x0 === null) return;
      var dx = e.changedTouches[0].clientX - x0, dy = e.changedTouches[0].clientY - y0;
      if (Math.abs(dx) > 40 && Math.abs(dx) > Math.abs(dy)) go(index + (dx < 0 ? 1 : -1));
      x0 = y0 = null;
    });
    render();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
