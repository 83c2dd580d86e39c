/* The admin's result form: "Add a deal" clones the last row of the formset. */
(function () {
  "use strict";
  function init() {
    var add = document.getElementById("add-deal");
    if (!add) return;
    add.addEventListener("click", function () {
      var total = document.getElementById("id_deals-TOTAL_FORMS");
      var rows = document.querySelectorAll("#deals tbody tr.deal-row");
      var last = rows[rows.length - 1];
      var index = parseInt(total.value, 10);
      var clone = last.cloneNode(true);
      clone.querySelectorAll("input, select").forEach(function (el) {
        el.name = el.name.replace(/deals-\d+-/, "deals-" + index + "-");
        el.id = el.id.replace(/deals-\d+-/, "deals-" + index + "-");
        if (el.type === "checkbox") { el.checked = false; } else { el.value = ""; }
      });
      clone.querySelector("td").textContent = String(index + 1);
      last.parentNode.appendChild(clone);
      total.value = String(index + 1);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
