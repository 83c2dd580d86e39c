// Deal rows of the desk's result form: a row is added when the last one is filled in, or with
// the "add a deal row" button. Without JavaScript the form works the same with the
// "More deal rows" link (the server sizes the form); no inline script (the CSP forbids it).
(function () {
  "use strict";
  var form = document.getElementById("result-form");
  if (!form) {
    return;
  }
  var body = form.querySelector("table.entry tbody");
  var counter = form.querySelector('input[name="rows"]');
  var maxRows = parseInt(form.getAttribute("data-max-rows"), 10) || 40;
  if (!body || !counter) {
    return;
  }

  function rows() {
    return body.querySelectorAll("tr.deal-row");
  }

  function renumber(text, from, to) {
    return text.replace(new RegExp("^d" + from + "-"), "d" + to + "-");
  }

  function addRow() {
    var all = rows();
    if (all.length >= maxRows) {
      return;
    }
    var last = all[all.length - 1];
    var from = all.length - 1;
    var to = all.length;
    var copy = last.cloneNode(true);
    copy.querySelectorAll("input, select").forEach(function (field) {
      field.name = renumber(field.name, from, to);
      var label = field.getAttribute("aria-label");
      if (label) {
        field.setAttribute("aria-label", label.split(String(from + 1)).join(String(to + 1)));
      }
      if (field.type === "checkbox") {
        field.checked = false;
      } else if (field.tagName === "SELECT") {
        field.selectedIndex = 0;
      } else {
        field.value = "";
      }
    });
    var heading = copy.querySelector("th");
    if (heading) {
      heading.textContent = String(to + 1);
    }
    body.appendChild(copy);
    counter.value = String(to + 1);
  }

  function lastRowUsed() {
    var all = rows();
    var fields = all[all.length - 1].querySelectorAll('input[type="text"]');
    return Array.prototype.some.call(fields, function (field) {
      return field.value.trim() !== "";
    });
  }

  body.addEventListener("input", function () {
    if (lastRowUsed()) {
      addRow();
    }
  });

  var button = document.createElement("button");
  button.type = "button";
  button.className = "secondary add-row";
  button.textContent = form.getAttribute("data-add-label") || "+";
  button.addEventListener("click", addRow);
  var more = form.querySelector("a.more-rows");
  if (more) {
    more.parentNode.replaceChild(button, more);
  }
})();
