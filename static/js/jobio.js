// Draws a checked job's I/O (jobio/charts.py: chart_data) with Chart.js: requests
// by size (writes and reads), their order, and the data written and read. The tables
// beside the canvases carry the same numbers for screen readers. Drawn when the page
// loads and again when htmx swaps in the finished check.
(function () {
  const write = "#1f5fa8";
  const read = "#8a5a00";
  const charts = [];

  function bar(id, labels, datasets, options) {
    const canvas = document.getElementById(id);
    if (!canvas) return;
    charts.push(
      new Chart(canvas, {
        type: "bar",
        data: { labels, datasets },
        options: Object.assign(
          { responsive: true, maintainAspectRatio: false, animation: false },
          options || {}
        ),
      })
    );
  }

  function draw() {
    const script = document.getElementById("jobio-data");
    if (!script || typeof Chart === "undefined") return;
    charts.splice(0).forEach((c) => c.destroy());
    const data = JSON.parse(script.textContent);
    bar("jobio-sizes", data.sizes.labels, [
      { label: "Writes", data: data.sizes.writes, backgroundColor: write },
      { label: "Reads", data: data.sizes.reads, backgroundColor: read },
    ], { scales: { y: { title: { display: true, text: "requests" } } } });
    if (data.access) bar("jobio-access", data.access.labels, [
      { label: "Requests", data: data.access.values, backgroundColor: ["#1d7a3a", "#1f5fa8", "#a83232"] },
    ], { indexAxis: "y", plugins: { legend: { display: false } } });
    bar("jobio-bytes", data.bytes.labels, [
      { label: "MiB", data: data.bytes.values, backgroundColor: [write, read] },
    ], { plugins: { legend: { display: false } } });
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", draw);
})();
