// On a phone a table's rows stack (static/css/portal.css: table.labelled): each cell
// on a line of its own after its column's heading, so no figure runs off the screen
// or hides in a box that scrolls sideways. Here each cell gets that heading as its
// data-label, on the page and again after htmx swaps rows or fragments in.
(function () {
  function heading(th) {
    // "1a<br>$HOME" reads "1a $HOME"; an <abbr> reads as its words.
    return Array.from(th.childNodes)
      .map((node) => (node.nodeName === "BR" ? " " : node.textContent))
      .join("")
      .replace(/\s+/g, " ")
      .trim();
  }

  function label(table) {
    // A table without headings (a row heading and its value) stacks as it is.
    const head = table.tHead && table.tHead.rows[0];
    const names = [];
    for (const th of head ? head.cells : []) {
      for (let i = 0; i < th.colSpan; i += 1) names.push(heading(th));
    }
    for (const body of table.tBodies) {
      for (const row of body.rows) {
        let column = 0;
        for (const cell of row.cells) {
          if (cell.colSpan === 1 && names[column] && cell.dataset.label !== names[column]) {
            cell.dataset.label = names[column];
          }
          column += cell.colSpan;
        }
      }
    }
    table.classList.add("labelled");
  }

  function labelAll() {
    // A heat map keeps its grid (static/css/portal.css fits it): as a list it is no map.
    document.querySelectorAll("main table:not(.keeps-grid)").forEach(label);
  }

  document.addEventListener("DOMContentLoaded", labelAll);
  document.addEventListener("htmx:afterSettle", labelAll);
})();
