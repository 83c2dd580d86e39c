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

    // Every piece of text (seat names come from a submitted record) goes in through textContent
    // or setAttribute, never through HTML: nothing a record holds can become markup.
    function el(tag, className, text) {
      var node = document.createElement(tag);
      if (className) node.className = className;
      if (text !== undefined) node.textContent = String(text);
      return node;
    }
    // Card faces are the server's own SVG (tournaments/rendering/cards.py), parsed once as SVG
    // (a parser that runs no script) and cloned.
    var parsedFaces = {};
    var svgParser = new DOMParser();
    function faceNode(code) {
      if (!faces[code]) return el("span", "", code);
      if (!parsedFaces[code]) {
        // inside an element that declares the SVG namespace, which the inline markup leaves out
        var doc = svgParser.parseFromString(
          '<svg xmlns="http://www.w3.org/2000/svg">' + faces[code].svg + "</svg>", "image/svg+xml");
        var svg = doc.documentElement.firstElementChild;
        parsedFaces[code] = svg && !doc.querySelector("parsererror")
          ? document.importNode(svg, true) : el("span", "", code);
      }
      return parsedFaces[code].cloneNode(true);
    }
    function face(code, cls) {
      var wrap = el("span", "cardwrap" + (cls ? " " + cls : ""));
      wrap.appendChild(faceNode(code));
      return wrap;
    }
    function cardsInto(container, list, mark) {
      if (!list || !list.length) {
        container.appendChild(el("span", "empty-note", L.lEmpty));
        return;
      }
      list.forEach(function (c) { container.appendChild(face(c, mark && mark[c] ? mark[c] : "")); });
    }
    function seatLabel(s, nSides) {
      var name = seats[s] || (L.lSeat + " " + (s + 1));
      var side = sideNames[s % nSides];
      return nSides === 2 && seats.length > 2 ? name + " (" + side + ")" : (seats[s] ? name : side);
    }
    function cardName(c) { return faces[c] ? faces[c].name : c; }
    function zone(className, label, headings) {
      var section = el("section", className);
      section.setAttribute("aria-label", label);
      var h3 = el("h3");
      headings.forEach(function (h) { h3.appendChild(el("span", h[1] || "", h[0])); });
      section.appendChild(h3);
      return section;
    }

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
      moveEl.replaceChildren();
      if (f.move) {
        var who = seatLabel(f.move.seat, nSides);
        var text = who + " " + L.lPlays + " " + cardName(f.move.card);
        if (f.move.take && f.move.take.length) {
          text += ", " + L.lTakes + " " + f.move.take.map(cardName).join(" + ");
        } else {
          text += ", " + L.lLays;
          mark[f.move.card] = "played";
        }
        moveEl.appendChild(document.createTextNode(text));
        if (f.move.scopa) {
          moveEl.appendChild(document.createTextNode(" "));
          moveEl.appendChild(el("span", "scopa-flash", L.lScopa));
        }
      } else {
        moveEl.textContent = L.lStart;
      }
      var zones = [];
      var tableZone = zone("zone table-zone", L.lTable, [[L.lTable], [f.deck_left + " " + L.lDeck]]);
      if (f.move && f.move.take && f.move.take.length) {
        var last = el("div", "cards last-capture");
        last.setAttribute("aria-label", L.lLast);
        last.appendChild(face(f.move.card, "played"));
        f.move.take.forEach(function (c) { last.appendChild(face(c, "taken")); });
        tableZone.appendChild(last);
      }
      var onTable = el("div", "cards");
      cardsInto(onTable, f.table, mark);
      tableZone.appendChild(onTable);
      zones.push(tableZone);
      f.hands.forEach(function (hand, s) {
        var toMove = f.to_move === s ? " ▶" : "";
        var label = seatLabel(s, nSides);
        var handZone = zone("zone", L.lHand + ": " + label, [[label + toMove]]);
        var held = el("div", "cards");
        cardsInto(held, hand);
        handZone.appendChild(held);
        zones.push(handZone);
      });
      f.captured.forEach(function (pile, side) {
        var name = nSides === 2 ? sideNames[side] : seatLabel(side, nSides);
        var pileZone = zone("zone pile", L.lCaptured + ": " + name, [
          [L.lCaptured + " · " + name],
          [pile.length + " · " + L.lScope + " " + f.scope[side], "pile-count"],
        ]);
        var taken = el("div", "cards");
        cardsInto(taken, pile);
        pileZone.appendChild(taken);
        zones.push(pileZone);
      });
      board.replaceChildren.apply(board, zones);
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
