// Draws the comparison charts with Chart.js (Debian's libjs-chart.js), and redraws
// them when htmx swaps in fresh figures. The figures are in a JSON script next to
// each canvas (exercises/figures.py: chart); the table beside it carries the same
// numbers for screen readers.
//
// Each target is a column. A series of runs is drawn as one dot per run, with their
// median as a short line across them, so the spread stays in sight; a reference is
// one marker per target. Series sit side by side within a column.
(function () {
  // One colour per series on every page (exercises/catalogue/figures.py: SERIES):
  // the class (each trainee's median) is the same orange on the lab and the projector.
  const colours = { mine: "#1f5fa8", class: "#8a5a00", reference: "#1d7a3a", measured: "#7a3a8a" };
  const width = 0.6; // of a column, shared by its series
  // A sweep of request sizes (exercises/lab/pages.py: Sweep) is a line per target.
  const palette = ["#1f5fa8", "#8a5a00", "#1d7a3a", "#7a3a8a", "#a11d2f", "#34696f"];

  // A small fixed shift per dot (0, +, -, ++, --, ...), so equal figures do not hide
  // each other and a redraw puts every dot where it was.
  function jitter(i) {
    const k = i % 7;
    return Math.ceil(k / 2) * (k % 2 ? 1 : -1) * 0.03;
  }

  function datasets(data) {
    const n = data.series.length;
    const sets = [];
    data.series.forEach((series, s) => {
      const colour = colours[series.name] || "#5b6575";
      const offset = n > 1 ? -width / 2 + (width * s) / (n - 1) : 0;
      if (series.kind === "sweep") {
        // One size after the other, at the columns' centres, joined.
        const own = palette[s % palette.length];
        sets.push({
          type: "scatter",
          label: series.label,
          showLine: true,
          data: series.values.map((y, column) => ({ x: column, y })).filter((p) => p.y !== null),
          borderColor: own,
          backgroundColor: own,
          pointRadius: 4,
          borderWidth: 2,
        });
      } else if (series.kind === "runs") {
        const dots = [];
        series.values.forEach((values, column) => {
          (values || []).forEach((y, i) => dots.push({ x: column + offset + jitter(i), y }));
        });
        sets.push({
          type: "scatter",
          label: series.label,
          data: dots,
          backgroundColor: colour + "99",
          borderColor: colour,
          pointRadius: 4,
        });
        sets.push({
          type: "scatter",
          label: series.label + ": median",
          auxiliary: true, // drawn, but not in the legend
          data: series.medians
            .map((y, column) => ({ x: column + offset, y }))
            .filter((p) => p.y !== null),
          borderColor: colour,
          backgroundColor: colour,
          pointStyle: "line",
          pointRadius: 14,
          borderWidth: 3,
        });
      } else if (series.kind === "range") {
        // [median, lowest, highest] per target: a marker and its whisker.
        const ranges = series.values.map((v, column) => v && { x: column + offset, v });
        sets.push({
          type: "scatter",
          label: series.label,
          data: ranges.filter(Boolean).map((r) => ({ x: r.x, y: r.v[0] })),
          borderColor: colour,
          backgroundColor: colour,
          pointStyle: "triangle",
          pointRadius: 7,
        });
        sets.push({
          type: "scatter",
          label: series.label + ": lowest–highest",
          auxiliary: true,
          showLine: true,
          spanGaps: false,
          data: ranges.filter(Boolean).flatMap((r) => [
            { x: r.x, y: r.v[1] },
            { x: r.x, y: r.v[2] },
            { x: r.x, y: null },
          ]),
          borderColor: colour,
          borderWidth: 2,
          pointRadius: 0,
        });
      } else {
        sets.push({
          type: "scatter",
          label: series.label,
          data: series.values
            .map((y, column) => ({ x: column + offset, y }))
            .filter((p) => p.y !== null),
          borderColor: colour,
          backgroundColor: colour,
          pointStyle: "rectRot",
          pointRadius: 7,
        });
      }
    });
    return sets;
  }

  // The decades from just below the lowest figure to just above the highest: the
  // axis's ends, and a labelled tick at each, so every dot has a decade on each side.
  // Before any figure, 1 to 1,000, still labelled by decade.
  function decades(ys) {
    const low = ys.length ? Math.floor(Math.log10(Math.min(...ys) / 1.2)) : 0;
    const top = ys.length ? Math.ceil(Math.log10(Math.max(...ys) * 1.2)) : 3;
    const high = Math.max(top, low + 1);
    const ticks = [];
    for (let p = low; p <= high; p++) ticks.push({ value: 10 ** p });
    return { min: 10 ** low, max: 10 ** high, ticks };
  }

  // 0.1, 1, 10, 100, 1,000: a decade as people write it, never 1.0 or 1e+3.
  function decadeLabel(value) {
    return value.toLocaleString("en", { maximumFractionDigits: 3 });
  }

  function draw(canvas) {
    const source = document.getElementById(canvas.dataset.chart);
    if (!source || !window.Chart) return;
    const data = JSON.parse(source.textContent);
    // Large type on a projector (the discussion page's ?view=large): the chart's too.
    Chart.defaults.font.size = document.body.classList.contains("projector") ? 20 : 12;
    const previous = Chart.getChart(canvas);
    if (previous) previous.destroy();
    const labels = data.labels;
    const sets = datasets(data);
    const ys = sets.flatMap((set) => set.data.map((p) => p.y)).filter((y) => y !== null && y > 0);
    const axis = decades(ys);
    new Chart(canvas, {
      type: "scatter",
      data: { datasets: sets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: {
            type: "linear",
            min: -0.5,
            max: labels.length - 0.5,
            // One tick per target, at its column's centre.
            afterBuildTicks: (scale) => {
              scale.ticks = labels.map((_, value) => ({ value }));
            },
            ticks: { autoSkip: false, callback: (value) => labels[value] },
            grid: { display: false },
            title: { display: Boolean(data.x_title), text: data.x_title || "" },
          },
          // The figures span from tens to tens of thousands of MiB/s.
          y: {
            type: "logarithmic",
            min: axis.min,
            max: axis.max,
            afterBuildTicks: (scale) => {
              scale.ticks = axis.ticks;
            },
            ticks: { autoSkip: false, callback: (value) => decadeLabel(value) },
            title: { display: true, text: "write MiB/s (log scale)" },
          },
        },
        plugins: {
          legend: {
            position: "bottom",
            labels: {
              usePointStyle: true,
              filter: (item, chart) => {
                const set = chart.datasets[item.datasetIndex];
                return !set.auxiliary && set.data.length > 0;
              },
            },
          },
          tooltip: {
            callbacks: {
              title: (items) => labels[Math.round(items[0].parsed.x)],
              label: (item) => `${item.dataset.label}: ${item.parsed.y.toFixed(1)} MiB/s`,
            },
          },
        },
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
