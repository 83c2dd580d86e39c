/* The phone score sheet at the table (scoresheets/templates/scoresheets/sheet.html).
 *
 * Deal by deal, the categories of the match's variant (the server lists them). The server
 * decides everything about the rules: after each change the sheet is sent to the check URL,
 * which answers with the running totals, whether the match is over, the referee's sentence and
 * what the next deal must be (a tie-break deal, the last capture). What is typed is kept in
 * localStorage at once, so a dropped connection or a reload loses nothing; the submission
 * carries a client key fixed for this sheet, so sending it again stores nothing twice. No inline
 * script (the CSP forbids it): the page passes its settings in data attributes. */
(function () {
  "use strict";
  var root = document.getElementById("sheet");
  if (!root) {
    return;
  }
  var cfg = JSON.parse(root.dataset.entry);
  var storageKey = root.dataset.storageKey;
  var csrf = document.querySelector("input[name=csrfmiddlewaretoken]");
  var dealsBox = document.getElementById("deals");
  var sentence = document.getElementById("sheet-sentence");
  var errorBox = document.getElementById("sheet-error");
  var offlineBox = document.getElementById("sheet-offline");
  var submitButton = document.getElementById("submit-sheet");
  var addButton = document.getElementById("add-deal");
  var timeBox = document.getElementById("time-expired");
  var submitLabel = submitButton.textContent;

  function load() {
    try {
      return JSON.parse(window.localStorage.getItem(storageKey) || "null");
    } catch (e) {
      return null;
    }
  }

  var stored = load();
  var state = {
    deals: (stored && stored.deals) || cfg.deals || [],
    client_key: (stored && stored.client_key) || root.dataset.clientKey,
    based_on: stored && stored.based_on !== undefined ? stored.based_on : root.dataset.basedOn,
    time_expired: Boolean(stored && stored.time_expired),
    pending: Boolean(stored && stored.pending),
  };
  var lastCapture = -1;
  var over = false;
  var sending = false;
  var timer = null;

  function save() {
    try {
      window.localStorage.setItem(storageKey, JSON.stringify(state));
    } catch (e) {
      /* private mode or full: the server's draft still has it */
    }
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
    save();
    window.clearTimeout(timer);
    timer = window.setTimeout(check, 350);
  }

  function post(url, body) {
    return window.fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf ? csrf.value : "" },
      credentials: "same-origin",
      body: JSON.stringify(body),
    });
  }

  function showOffline(on) {
    offlineBox.hidden = !on;
    offlineBox.textContent = on ? root.dataset.tOffline : "";
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
    post(root.dataset.checkUrl, { deals: state.deals, time_expired: state.time_expired })
      .then(function (response) {
        return response.json();
      })
      .then(function (answer) {
        showOffline(false);
        applyAnswer(answer);
      })
      .catch(function () {
        showOffline(true);
        submitButton.disabled = sending;
      });
  }

  function applyAnswer(answer) {
    if (!answer.ok) {
      showError(answer.error);
      sentence.textContent = "";
      submitButton.disabled = true;
      return;
    }
    showError("");
    document.getElementById("total-home").textContent = String(answer.totals[0]);
    document.getElementById("total-away").textContent = String(answer.totals[1]);
    sentence.textContent = answer.sentence;
    over = answer.over;
    submitButton.disabled = !over || sending;
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
    save();
  }

  function send() {
    if (sending) {
      return;
    }
    sending = true;
    submitButton.disabled = true;
    submitButton.textContent = root.dataset.tSending;
    post(root.dataset.submitUrl, {
      deals: filledDeals(),
      time_expired: state.time_expired,
      client_key: state.client_key,
      based_on: state.based_on,
    })
      .then(function (response) {
        return response.json();
      })
      .then(function (answer) {
        sending = false;
        submitButton.textContent = submitLabel;
        showOffline(false);
        if (answer.ok) {
          window.localStorage.removeItem(storageKey);
          window.location.assign(answer.url);
          return;
        }
        state.pending = false;
        save();
        showError(answer.error);
        submitButton.disabled = !over;
      })
      .catch(function () {
        sending = false;
        submitButton.textContent = submitLabel;
        submitButton.disabled = false;
        showOffline(true); // kept as pending: sent again when the connection is back
      });
  }

  addButton.addEventListener("click", function () {
    addDeal(false);
    changed(null);
  });
  submitButton.addEventListener("click", function () {
    state.pending = true;
    save();
    send();
  });
  if (timeBox) {
    timeBox.checked = state.time_expired;
    timeBox.addEventListener("change", function () {
      state.time_expired = timeBox.checked;
      changed(null);
    });
  }
  window.addEventListener("online", function () {
    showOffline(false);
    if (state.pending) {
      send();
    } else {
      check();
    }
  });

  render();
  save();
  if (state.pending && navigator.onLine !== false) {
    send();
  } else {
    check();
  }
})();
