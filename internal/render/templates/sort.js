// Sorts a table.sortable by the clicked column: numbers by data-v, text otherwise;
// a second click reverses; empty values go last.
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var num = th.getAttribute("data-type") === "num";
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) {
        var td = row.cells[col];
        var v = td ? (td.hasAttribute("data-v") ? td.getAttribute("data-v") : td.textContent.trim()) : "";
        return num ? (v === "" ? NaN : parseFloat(v)) : v;
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (num) {
          if (isNaN(x) || isNaN(y)) { return isNaN(x) - isNaN(y); }
          return (x - y) * dir;
        }
        if (x === "" || y === "") { return (x === "") - (y === ""); }
        return x.localeCompare(y, undefined, {numeric: true}) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});

// The filter: a row or column entry whose data-client, data-protocol,
// data-items or data-c differs from a chosen value is hidden, in every table.
(function () {
  var form = document.getElementById("filter");
  if (!form) { return; }
  var keys = ["client", "protocol", "items", "c"];
  var apply = function () {
    var want = {};
    form.querySelectorAll("select[data-filter]").forEach(function (s) { want[s.getAttribute("data-filter")] = s.value; });
    var sel = keys.map(function (k) { return "[data-" + k + "]"; }).join(",");
    document.querySelectorAll("tr" + sel.split(",").join(",tr") + ",td" + sel.split(",").join(",td") + ",th" + sel.split(",").join(",th")).forEach(function (el) {
      if (el.tagName === "TABLE") { return; }
      var hide = keys.some(function (k) {
        var v = el.getAttribute("data-" + k);
        return want[k] && v !== null && v !== "" && v !== "0" && v !== want[k];
      });
      el.classList.toggle("hidden-by-filter", hide);
    });
  };
  form.addEventListener("change", apply);
})();
