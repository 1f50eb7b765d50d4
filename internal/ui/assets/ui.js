// convoy ui: keeps an open page up to date. Every data-refresh seconds it
// fetches the page's main part again (X-Convoy-Fragment) and swaps it in,
// keeping the releases a reader folded folded. The pages work without it.
(function () {
  "use strict";
  var period = parseInt(document.body.getAttribute("data-refresh"), 10) || 5;
  var busy = false;
  var last = null; // the main part last swapped in
  function folded(main) {
    var ids = {};
    main.querySelectorAll("details[id]").forEach(function (d) { if (!d.open) ids[d.id] = true; });
    return ids;
  }
  function update() {
    var main = document.getElementById("main");
    if (!main || busy || document.hidden) return;
    var active = document.activeElement;
    if (active && main.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName)) return;
    busy = true;
    fetch(location.href, { headers: { "X-Convoy-Fragment": "1" }, credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null || html === last) return;
        var keep = folded(main);
        main.innerHTML = html;
        last = html;
        main.querySelectorAll("details[id]").forEach(function (d) { if (keep[d.id]) d.open = false; });
        document.body.setAttribute("data-updated", String(Date.now()));
      })
      .catch(function () {})
      .then(function () { busy = false; });
  }
  setInterval(update, period * 1000);
})();
