// Draws the comparison charts with Chart.js (Debian's libjs-chart.js), and redraws
// them when htmx swaps in fresh figures. The figures are in a JSON script next to
// each canvas; the table beside it carries the same numbers for screen readers.
(function () {
  const colours = ["#1f5fa8", "#8a5a00", "#1d7a3a", "#7a3a8a"];

  function draw(canvas) {
    const source = document.getElementById(canvas.dataset.chart);
    if (!source || !window.Chart) return;
    const data = JSON.parse(source.textContent);
    const previous = Chart.getChart(canvas);
    if (previous) previous.destroy();
    new Chart(canvas, {
      type: "bar",
      data: {
        labels: data.labels,
        datasets: data.datasets.map((set, i) => ({ ...set, backgroundColor: colours[i % colours.length] })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          // The figures span from tens to tens of thousands of MiB/s.
          y: { type: "logarithmic", title: { display: true, text: "write MiB/s (log scale)" } },
        },
        plugins: { legend: { position: "bottom" } },
      },
    });
  }

  function drawAll(root) {
    root.querySelectorAll("canvas[data-chart]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", () => drawAll(document));
  // afterSwap fires on the new content in the same task that inserts it, so a
  // redrawn canvas is never on screen without its chart (afterSettle comes ~20 ms later).
  document.addEventListener("htmx:afterSwap", (event) => drawAll(event.target));
})();
