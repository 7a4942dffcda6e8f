// The instructor's class grid: filter its rows by name and by where a trainee
// stands, and sort them. In the browser, on the rows it holds: the overview's polls
// replace and add rows (exercises/courses/views.py: course_overview), and each time
// the choices are applied again.
(function () {
  const order = ["failed", "waiting", "running", "part", "none", "done"]; // who needs you first

  function apply() {
    const body = document.getElementById("grid-rows");
    if (!body) return;
    const name = (document.querySelector("[data-grid-filter]")?.value || "").trim().toLowerCase();
    const state = document.querySelector("[data-grid-state]")?.value || "";
    const sort = document.querySelector("[data-grid-sort]")?.value || "joined";
    const rows = Array.from(body.rows);
    const nobody = document.getElementById("nobody-yet");
    if (nobody) nobody.hidden = rows.length > 0; // someone joined since the page was drawn
    const count = document.getElementById("grid-count");
    if (count) count.textContent = rows.length;
    let hidden = 0;
    rows.forEach((row) => {
      const show = row.dataset.name.includes(name) && (!state || row.dataset.state === state);
      row.hidden = !show;
      if (!show) hidden += 1;
    });
    body.classList.toggle("filtered", hidden > 0); // a filter shows all it finds
    const note = document.getElementById("grid-hidden");
    if (note) {
      note.hidden = hidden === 0;
      note.textContent = `${rows.length - hidden} of ${rows.length} shown (filtered).`;
    }
    if (sort === "joined" && !body.dataset.sorted) return;
    const key = {
      joined: (row) => Number(row.dataset.joined),
      name: (row) => row.dataset.name,
      state: (row) => order.indexOf(row.dataset.state),
    }[sort];
    const sorted = [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    if (sorted.some((row, i) => row !== rows[i])) body.append(...sorted);
    body.dataset.sorted = sort === "joined" ? "" : sort;
  }

  document.addEventListener("input", (event) => {
    if (event.target.matches("[data-grid-filter], [data-grid-state], [data-grid-sort]")) apply();
  });
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-show-state]");
    if (!button) return;
    const select = document.querySelector("[data-grid-state]");
    select.value = button.dataset.showState;
    apply();
    document.getElementById("class-grid")?.scrollIntoView({ behavior: "smooth" });
  });
  document.addEventListener("DOMContentLoaded", apply);
  document.addEventListener("htmx:afterSettle", apply);
})();
