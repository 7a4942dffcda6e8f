// Draws a replay's answer (jobio/replay_figures.py: _chart) with Chart.js: per target,
// the time the job would spend in I/O, and the copies Check my job's rules count where
// a target does not keep results (or is a node's own), stacked, on a log scale (seconds to hours side by side). The table above carries
// the same numbers for screen readers. Drawn when the page loads and after each swap.
(function () {
  let chart = null;

  function draw() {
    const script = document.getElementById("replay-data");
    const canvas = document.getElementById("replay-chart");
    if (!script || !canvas || typeof Chart === "undefined") return;
    if (chart) chart.destroy();
    const data = JSON.parse(script.textContent);
    chart = new Chart(canvas, {
      type: "bar",
      data: {
        labels: data.labels,
        datasets: [
          { label: "Your job's I/O", data: data.io, backgroundColor: "#1f5fa8" },
          { label: "Copies", data: data.staging, backgroundColor: "#8a5a00" },
        ],
      },
      options: {
        indexAxis: "y",
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          x: { type: "logarithmic", stacked: true, title: { display: true, text: "seconds" } },
          y: { stacked: true },
        },
      },
    });
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", draw);
})();
