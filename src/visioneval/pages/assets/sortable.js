// Click a column head of a table.sortable to sort its rows by that column (again to
// reverse); cells carry their sort key in data-v, and empty keys stay last either way.
document.querySelectorAll('table.sortable').forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    if (th.dataset.nosort !== undefined) return;
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var asc = th.dataset.dir !== 'asc';
      Array.prototype.forEach.call(heads, function (h) { delete h.dataset.dir; });
      th.dataset.dir = asc ? 'asc' : 'desc';
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
        var xe = x === undefined || x === '', ye = y === undefined || y === '';
        if (xe || ye) return xe - ye;  // missing values last, either way
        var nx = parseFloat(x), ny = parseFloat(y), r;
        if (!isNaN(nx) && !isNaN(ny)) r = nx - ny; else r = x.localeCompare(y);
        return asc ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
