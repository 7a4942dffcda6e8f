// Draws each target's last 30 days on My storage (exercises/quotas/status.py:
// TargetStorage.chart) with Chart.js: the space used, and the limit as a dashed line.
// The forecast beside it says the same in words, for screen readers and without
// JavaScript.
(function () {
  function draw() {
    if (typeof Chart === "undefined") return;
    document.querySelectorAll("canvas[id^='history-']").forEach((canvas) => {
      const script = document.getElementById(canvas.id.slice("history-".length) + "-history");
      if (!script) return;
      const data = JSON.parse(script.textContent);
      const datasets = [
        { label: "Used (GiB)", data: data.used, borderColor: "#1f5fa8", pointRadius: 0, fill: false },
      ];
      if (data.limit !== null) {
        datasets.push({
          label: "Limit (GiB)",
          data: data.labels.map(() => data.limit),
          borderColor: "#a83232",
          borderDash: [6, 4],
          pointRadius: 0,
        });
      }
      const old = Chart.getChart(canvas);
      if (old) old.destroy();
      new Chart(canvas, {
        type: "line",
        data: { labels: data.labels, datasets },
        options: {
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          scales: { y: { beginAtZero: true, title: { display: true, text: "GiB" } } },
        },
      });
    });
  }
  document.addEventListener("DOMContentLoaded", draw);
})();
