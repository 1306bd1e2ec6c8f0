/* The book's own script, plain JavaScript with no library (the book reads offline):
   - the reproducibility report's filters (icdl.repro.pages.filter_bar): keep the claims of one document, chapter or
     status, or those whose words hold a text; and open a claim its address names (#claim-<id>), on load and when the
     address changes (pages without the filter bar are left alone);
   - an inline formula wider than its table cell is marked "wide" once MathJax has typeset it, and scrolls inside
     the cell with a shadow at the edge where it goes on (book.css), instead of being cut at the cell's edge. */
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; el.scrollIntoView(); }
  }
  function apply(bar) {
    var want = {};
    bar.querySelectorAll("[data-filter]").forEach(function (f) { want[f.dataset.filter] = f.value.trim().toLowerCase(); });
    var shown = 0, all = 0;
    document.querySelectorAll(".claims").forEach(function (group) {
      var inGroup = 0;
      group.querySelectorAll("details.claim").forEach(function (c) {
        all += 1;
        var ok = (!want.document || group.dataset.document === want.document) &&
                 (!want.chapter || c.dataset.chapter === want.chapter) &&
                 (!want.status || c.dataset.status === want.status) &&
                 (!want.text || c.textContent.toLowerCase().indexOf(want.text) >= 0);
        c.hidden = !ok;
        if (ok) { shown += 1; inGroup += 1; }
      });
      var heading = group.previousElementSibling;  // the document's heading (MyST wraps it in a section)
      group.hidden = inGroup === 0;
      if (group.parentElement && group.parentElement.tagName === "SECTION") { group.parentElement.hidden = inGroup === 0; }
      else if (heading && /^H[1-6]$/.test(heading.tagName)) { heading.hidden = inGroup === 0; }
    });
    var count = bar.querySelector(".claims-count");
    if (count) { count.textContent = shown === all ? all + " claims" : shown + " of " + all + " claims"; }
  }
  document.addEventListener("DOMContentLoaded", function () {
    var bar = document.querySelector(".claims-filter");
    if (bar) {
      bar.querySelectorAll("[data-filter]").forEach(function (f) {
        f.addEventListener("input", function () { apply(bar); });
        f.addEventListener("change", function () { apply(bar); });
      });
      apply(bar);
    }
    openTarget();
  });
  window.addEventListener("hashchange", openTarget);

  function markWide() {
    document.querySelectorAll("td mjx-container:not([display='true']), dd mjx-container:not([display='true'])")
      .forEach(function (m) {
        m.classList.remove("wide");
        var cell = m.closest("td, dd");
        var style = getComputedStyle(cell);
        var right = cell.getBoundingClientRect().right - parseFloat(style.paddingRight || "0");
        if (m.getBoundingClientRect().right > right + 1) { m.classList.add("wide"); }
      });
  }
  window.addEventListener("load", function () {
    var ready = window.MathJax && MathJax.startup && MathJax.startup.promise;
    (ready ? MathJax.startup.promise : Promise.resolve()).then(markWide, markWide);
  });
  var timer = null;
  window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(markWide, 150); });
})();
