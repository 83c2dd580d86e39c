/* The phone score sheet at the table (scoresheets/templates/scoresheets/sheet.html).
 *
 * Deal by deal, the categories of the match's variant (the server lists them). The phone
 * referees the sheet as it is typed, online and offline: sheet-referee.js, the engine's referee
 * ported, reads the engine's own figures the page carries (cfg.referee) and answers at once
 * what the check URL would (the running totals, whether the match is over, the referee's
 * sentence, what the next deal must be; tests/engine/test_sheet_referee_js.py holds them
 * equal). The server still referees the sheet when it arrives (and refuses an impossible one,
 * which then comes back here to be corrected). The server hears the sheet as typed so far (its
 * draft: the desk's room shows the table "being entered", another phone of the line resumes it)
 * at the first change, then once the typing pauses for DRAFT_MS, and only when it changed since
 * it last heard it: at a venue a request after every field typed was most of the phones' load
 * (docs/performance.md, "The phones at a venue"). A refusal in its answer (the match closed,
 * the result in force) is shown as before. A page without the port (no cfg.referee, kept from
 * an older release) asks the server after each pause as it always did, and offline only adds up
 * the totals and lets the player send any sheet with deals.
 *
 * What is typed is kept at once in IndexedDB (table-store.js): a reload, a closed browser or a
 * phone restarted loses nothing. A finished sheet goes to the outbox (table-app.js) with a
 * client key fixed for this sheet, and is sent whenever the network answers, as often as
 * needed; the server stores it once. The other line may countersign on this same phone with
 * its one-time code (printed on its half of the table card), online or offline: the server
 * checks the code when the sheet arrives. No inline script (the CSP forbids it): the page
 * passes its settings in data attributes. */
(function () {
  "use strict";
  var root = document.getElementById("sheet");
  if (!root || !window.ScopaTableStore) {
    return;
  }
  var store = window.ScopaTableStore;
  var cfg = JSON.parse(root.dataset.entry);
  var referee = cfg.referee && window.ScopaReferee ? cfg.referee : null;
  var storageKey = root.dataset.storageKey;
  var dealsBox = document.getElementById("deals");
  var sentence = document.getElementById("sheet-sentence");
  var errorBox = document.getElementById("sheet-error");
  var offlineBox = document.getElementById("sheet-offline");
  var submitButton = document.getElementById("submit-sheet");
  var addButton = document.getElementById("add-deal");
  var timeBox = document.getElementById("time-expired");
  var codeBox = document.getElementById("countersign-code");
  var codeButton = document.getElementById("countersign-here");
  var SENT = ["waiting", "countersigned", "referee", "done"];
  var state = null;
  var lastCapture = -1;
  var over = false;
  var online = true;
  var timer = null;
  var DRAFT_MS = 2000;
  var told = null; // the deals the server last heard (JSON), null: nothing yet this page
  var refusal = null; // the server's last refusal (the match closed): held until it answers ok

  function fresh() {
    return {
      deals: cfg.deals || [],
      client_key: root.dataset.clientKey,
      based_on: root.dataset.basedOn,
      lines: cfg.lines,
      time_expired: false,
      outbox: null,
    };
  }

  function save() {
    state.sync_url = root.dataset.syncUrl;
    state.status_url = root.dataset.statusUrl;
    state.page_url = root.dataset.pageUrl;
    return store.put(storageKey, state);
  }

  function locked() {
    return Boolean(state.outbox) && ["queued", "blocked", "kept"].indexOf(state.outbox.status) !== -1;
  }

  function blankDeal(tiebreak) {
    return { breakdown: [{}, {}], tiebreak: Boolean(tiebreak), last_capture: null };
  }

  function isBlank(deal) {
    return [0, 1].every(function (side) {
      var cells = deal.breakdown[side] || {};
      return Object.keys(cells).every(function (key) {
        return cells[key] === "" || cells[key] === null || cells[key] === undefined;
      });
    });
  }

  function text(template, n) {
    return template.replace("{n}", String(n));
  }

  function sideSum(deal, side) {
    var cells = deal.breakdown[side] || {};
    return Object.keys(cells).reduce(function (sum, key) {
      var value = parseInt(cells[key], 10);
      return sum + (isNaN(value) ? 0 : value);
    }, 0);
  }

  function makeCard(index) {
    var deal = state.deals[index];
    var card = document.createElement("fieldset");
    card.className = "deal-card" + (deal.tiebreak ? " tiebreak" : "");
    card.dataset.index = String(index);
    var legend = document.createElement("legend");
    card.appendChild(legend);
    var grid = document.createElement("div");
    grid.className = "deal-grid";
    ["", cfg.names[0], cfg.names[1]].forEach(function (name) {
      var head = document.createElement("span");
      head.className = "head";
      head.textContent = name;
      grid.appendChild(head);
    });
    cfg.categories.forEach(function (category) {
      var label = document.createElement("span");
      label.textContent = category.label;
      grid.appendChild(label);
      [0, 1].forEach(function (side) {
        var input = document.createElement("input");
        input.type = "number";
        input.inputMode = "numeric";
        input.min = "0";
        input.max = "99";
        input.name = "d" + index + "-" + side + "-" + category.key;
        input.setAttribute(
          "aria-label",
          text(root.dataset.tDeal, index + 1) + ", " + cfg.names[side] + ", " + category.label
        );
        var value = (deal.breakdown[side] || {})[category.key];
        input.value = value === undefined || value === null ? "" : String(value);
        input.addEventListener("input", function () {
          state.deals[index].breakdown[side][category.key] = input.value;
          changed(card);
        });
        grid.appendChild(input);
      });
    });
    var pointsLabel = document.createElement("span");
    pointsLabel.textContent = root.dataset.tPoints;
    grid.appendChild(pointsLabel);
    [0, 1].forEach(function (side) {
      var sum = document.createElement("span");
      sum.className = "sum side-" + side;
      grid.appendChild(sum);
    });
    card.appendChild(grid);
    var captureLabel = document.createElement("label");
    captureLabel.className = "last-capture";
    captureLabel.hidden = true;
    captureLabel.textContent = root.dataset.tLastCapture + " ";
    var select = document.createElement("select");
    select.name = "d" + index + "-last_capture";
    ["", "0", "1"].forEach(function (value) {
      var option = document.createElement("option");
      option.value = value;
      option.textContent = value === "" ? "—" : cfg.names[parseInt(value, 10)];
      select.appendChild(option);
    });
    select.value = deal.last_capture === null || deal.last_capture === undefined ? "" : String(deal.last_capture);
    select.addEventListener("change", function () {
      state.deals[index].last_capture = select.value === "" ? null : parseInt(select.value, 10);
      changed(card);
    });
    captureLabel.appendChild(select);
    card.appendChild(captureLabel);
    refreshCard(card);
    return card;
  }

  function refreshCard(card) {
    var index = parseInt(card.dataset.index, 10);
    var deal = state.deals[index];
    card.classList.toggle("tiebreak", Boolean(deal.tiebreak));
    card.querySelector("legend").textContent = text(
      deal.tiebreak ? root.dataset.tTiebreak : root.dataset.tDeal,
      index + 1
    );
    [0, 1].forEach(function (side) {
      card.querySelector(".sum.side-" + side).textContent = String(sideSum(deal, side));
    });
    var capture = card.querySelector(".last-capture");
    capture.hidden = !(index === lastCapture || (deal.last_capture !== null && deal.last_capture !== undefined));
  }

  function cards() {
    return dealsBox.querySelectorAll(".deal-card");
  }

  function render() {
    dealsBox.textContent = "";
    if (!state.deals.length) {
      state.deals.push(blankDeal(false));
    }
    state.deals.forEach(function (_deal, index) {
      dealsBox.appendChild(makeCard(index));
    });
    lockInputs();
  }

  function lockInputs() {
    var frozen = locked();
    root.querySelectorAll("#deals input, #deals select, #time-expired").forEach(function (input) {
      input.disabled = frozen;
    });
    addButton.disabled = frozen;
    if (codeBox) {
      codeBox.disabled = frozen;
      codeButton.disabled = frozen || !ready();
    }
    submitButton.disabled = frozen || !ready();
  }

  function ready() {
    // the referee (the server's, or the phone's offline) says the match is over; a page
    // without the phone's referee may queue any sheet with deals offline
    return online || referee ? over : filledDeals().length > 0;
  }

  function addDeal(tiebreak) {
    state.deals.push(blankDeal(tiebreak));
    dealsBox.appendChild(makeCard(state.deals.length - 1));
    save();
  }

  function changed(card) {
    if (card) {
      refreshCard(card);
    }
    localTotals();
    roomForNext();
    if (!online || referee) {
      checkHere();
    }
    save();
    window.clearTimeout(timer);
    if (!referee) {
      timer = window.setTimeout(check, 350);
    } else if (told === null) {
      check(); // the first change: the desk sees the table "being entered" at once
    } else {
      timer = window.setTimeout(check, DRAFT_MS);
    }
  }

  function localTotals() {
    var totals = [0, 1].map(function (side) {
      return state.deals.reduce(function (sum, deal) {
        return sum + sideSum(deal, side);
      }, 0);
    });
    document.getElementById("total-home").textContent = String(totals[0]);
    document.getElementById("total-away").textContent = String(totals[1]);
  }

  function post(url, body) {
    return window.fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" }, // no CSRF token: the card is the credential
      credentials: "same-origin",
      body: JSON.stringify(body),
    });
  }

  function showOffline(on) {
    online = !on;
    offlineBox.hidden = !on;
    offlineBox.textContent = on ? root.dataset.tOffline + (referee ? " " + root.dataset.tHere : "") : "";
    if (on && referee) {
      checkHere();
    } else if (on) {
      sentence.textContent = root.dataset.tLocal;
      roomForNext();
    }
    lockInputs();
  }

  function checkHere() {
    // the phone's own referee, as the check URL would answer
    if (referee && !locked()) {
      applyAnswer(refusal || window.ScopaReferee.progress(referee, state.deals, state.time_expired));
    }
  }

  function roomForNext() {
    // offline without the phone's referee nobody says what the next deal must be: a blank one,
    // the player goes on typing
    if (!online && !referee && !locked() && filledDeals().length === state.deals.length) {
      addDeal(false);
    }
  }

  function showError(message) {
    errorBox.hidden = !message;
    errorBox.textContent = message || "";
  }

  function filledDeals() {
    var filled = state.deals.slice();
    while (filled.length && isBlank(filled[filled.length - 1])) {
      filled.pop();
    }
    return filled;
  }

  function check() {
    if (locked()) {
      return;
    }
    var body = JSON.stringify({ deals: state.deals, time_expired: state.time_expired });
    if (referee && body === told) {
      return; // the phone referees it; the server already holds this draft
    }
    if (referee) {
      told = body;
    }
    post(root.dataset.checkUrl, JSON.parse(body))
      .then(function (response) {
        return response.json();
      })
      .then(function (answer) {
        showOffline(false);
        // a refusal the phone's referee does not share (the match closed, the result in force)
        // holds until the server answers otherwise; one it shares follows the typing
        refusal =
          referee && !answer.ok && window.ScopaReferee.progress(referee, state.deals, state.time_expired).ok
            ? answer
            : null;
        if (!referee || !answer.ok) {
          applyAnswer(answer); // the server's reading, or its refusal (the match closed)
        } else {
          checkHere();
        }
      })
      .catch(function () {
        told = referee ? null : told; // not heard: told again with the next change
        showOffline(true);
      });
  }

  function applyAnswer(answer) {
    if (!answer.ok) {
      showError(answer.error);
      sentence.textContent = "";
      over = false;
      lockInputs();
      return;
    }
    showError("");
    document.getElementById("total-home").textContent = String(answer.totals[0]);
    document.getElementById("total-away").textContent = String(answer.totals[1]);
    sentence.textContent = answer.sentence;
    over = answer.over;
    addButton.hidden = over;
    var filled = filledDeals();
    lastCapture = answer.needs_last_capture ? filled.length - 1 : -1;
    if (over) {
      while (state.deals.length > filled.length && state.deals.length > 1) {
        state.deals.pop();
        var all = cards();
        all[all.length - 1].remove();
      }
    } else if (!answer.needs_last_capture) {
      if (filled.length === state.deals.length) {
        addDeal(answer.next_tiebreak);
      } else {
        state.deals[state.deals.length - 1].tiebreak = Boolean(answer.next_tiebreak);
      }
    }
    cards().forEach(refreshCard);
    lockInputs();
    save();
  }

  function queue(code) {
    state.sent_deals = filledDeals();
    state.outbox = { status: "queued", tries: 0, code: code || "", error: "" };
    lockInputs();
    save().then(function () {
      if (window.ScopaOutbox) {
        window.ScopaOutbox.flush(false);
      }
    });
  }

  document.addEventListener("scopa:outbox", function (event) {
    var record = event.detail;
    if (!record || record.key !== storageKey || !state) {
      return;
    }
    state.outbox = record.outbox;
    if (record.outbox && SENT.indexOf(record.outbox.status) !== -1) {
      window.location.assign(root.dataset.pageUrl); // the server's page says where it stands
      return;
    }
    if (record.outbox && record.outbox.status === "queued") {
      showOffline(true);
    }
    if (record.outbox && ["refused", "wrong_code"].indexOf(record.outbox.status) !== -1) {
      showError(record.outbox.error);
      state.outbox = null; // back to the player: correct the sheet or type the code again
      save();
      check();
    }
    lockInputs();
  });

  function start(stored) {
    // a sheet already sent (or superseded) is the server's now: this page starts afresh
    var sent = stored && stored.outbox && SENT.indexOf(stored.outbox.status) !== -1;
    state = stored && !sent && stored.deals ? stored : fresh();
    if (!state.lines) {
      state.lines = cfg.lines;
    }
    if (stored && stored.pending && !stored.outbox) {
      // a sheet queued by the page before the outbox (localStorage, no client key change)
      state.outbox = { status: "queued", tries: 0, code: "", error: "" };
      state.sent_deals = filledDeals();
    }
    addButton.addEventListener("click", function () {
      addDeal(false);
      changed(null);
    });
    submitButton.addEventListener("click", function () {
      queue("");
    });
    if (codeButton) {
      codeButton.addEventListener("click", function () {
        if (codeBox.value.trim()) {
          queue(codeBox.value.trim());
        }
      });
    }
    if (timeBox) {
      timeBox.checked = Boolean(state.time_expired);
      timeBox.addEventListener("change", function () {
        state.time_expired = timeBox.checked;
        changed(null);
      });
    }
    window.addEventListener("online", function () {
      showOffline(false);
      check();
    });
    window.addEventListener("offline", function () {
      showOffline(true);
    });
    render();
    localTotals();
    save().then(function () {
      if (state.outbox && window.ScopaOutbox) {
        window.ScopaOutbox.flush(false);
      }
    });
    if (!referee) {
      check();
    } else {
      checkHere();
      if (filledDeals().length) {
        check(); // deals kept on this phone (typed offline, say): the server hears them once
      }
    }
  }

  store.get(storageKey).then(start, function () {
    start(null);
  });
})();
