/* Behaviour every page may use, declared in the markup (no inline handlers: the
   Content-Security-Policy allows scripts from our own files only).
   - <select data-submit-on-change>: submits its form when the choice changes (language switch).
   - <button data-print>: prints the page (table cards).
   - <form data-confirm="question">: asks before submitting (closing a stage). */
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target instanceof HTMLSelectElement && target.hasAttribute("data-submit-on-change") && target.form) {
      target.form.submit();
    }
  });
  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("[data-print]") : null;
    if (button) window.print();
  });
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form instanceof HTMLFormElement && form.hasAttribute("data-confirm") &&
        !window.confirm(form.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });
})();
