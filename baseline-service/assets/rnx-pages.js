// rnx pages: draws the charts of every <section class="rnx-page"> from the JSON it carries (Chart.js 3, served by
// rnx-server or inlined in a report). Text and tables are rendered by the server; this file only draws.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];
  var baseColor = "rgba(31, 119, 180, 0.55)";
  var headColor = "rgba(255, 127, 14, 0.65)";

  function dataOf(section) {
    var node = section.querySelector("script.rnx-data");
    return node ? JSON.parse(node.textContent) : {};
  }

  function runHref(id) {
    if (document.body.classList.contains("report")) {
      var anchor = "run-" + id;
      return document.getElementById(anchor) ? "#" + anchor : null;
    }
    return "/runs/" + encodeURIComponent(id);
  }

  function shortDate(ms) {
    return new Date(ms).toISOString().slice(0, 10);
  }

  // Vertical bars from lo_ms to hi_ms behind each point: the interval of every drawn median.
  var intervalPlugin = {
    id: "rnxIntervals",
    beforeDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      var y = chart.scales.y;
      chart.data.datasets.forEach(function (ds, di) {
        if (!chart.isDatasetVisible(di)) return;
        var meta = chart.getDatasetMeta(di);
        ctx.save();
        ctx.strokeStyle = ds.borderColor;
        ctx.globalAlpha = 0.35;
        ctx.lineWidth = 1;
        meta.data.forEach(function (el, i) {
          var p = ds.data[i];
          if (p.lo == null || p.hi == null) return;
          ctx.beginPath();
          ctx.moveTo(el.x, y.getPixelForValue(p.lo));
          ctx.lineTo(el.x, y.getPixelForValue(p.hi));
          ctx.stroke();
        });
        ctx.restore();
      });
    }
  };

  // A dashed vertical line at each change point (the first run after a step), red for slower, green for faster;
  // the canvas records how many it drew (data-change-markers) for the browser test.
  function changePlugin(changes) {
    return {
      id: "rnxChanges",
      afterDatasetsDraw: function (chart) {
        var ctx = chart.ctx;
        var x = chart.scales.x;
        var area = chart.chartArea;
        var drawn = 0;
        ctx.save();
        ctx.setLineDash([5, 4]);
        ctx.lineWidth = 1.5;
        changes.forEach(function (c) {
          var px = x.getPixelForValue(Date.parse(c.t));
          if (!(px >= area.left && px <= area.right)) return;
          ctx.strokeStyle = c.direction === "slower" ? "#d00" : "#080";
          ctx.beginPath();
          ctx.moveTo(px, area.top);
          ctx.lineTo(px, area.bottom);
          ctx.stroke();
          drawn += 1;
        });
        ctx.restore();
        chart.canvas.setAttribute("data-change-markers", String(drawn));
      }
    };
  }

  function drawHistory(section, data) {
    var canvas = section.querySelector("canvas.history-chart");
    if (!canvas) return;
    var log = canvas.getAttribute("data-scale") === "log";
    var datasets = (data.series || []).map(function (series, i) {
      var color = palette[i % palette.length];
      var points = series.points.filter(function (p) { return p.median_ms != null; }).map(function (p) {
        return { x: Date.parse(p.t), y: p.median_ms, lo: p.lo_ms, hi: p.hi_ms, run: p.run_id, baseline: p.baseline,
                 commit: p.commit, branch: p.branch };
      });
      return {
        label: series.env_id.slice(0, 12) + (series.device ? " " + series.device : ""),
        data: points,
        borderColor: color,
        backgroundColor: color,
        showLine: true,
        borderWidth: 1,
        pointStyle: points.map(function (p) {
          return p.baseline === "accepted" ? "triangle" : p.baseline === "push" ? "rectRot" : "circle";
        }),
        pointRadius: points.map(function (p) { return p.baseline === "accepted" ? 7 : p.baseline ? 4 : 2.5; }),
        pointBackgroundColor: points.map(function (p) { return p.baseline === "accepted" ? "#d00" : color; }),
        pointBorderColor: points.map(function (p) { return p.baseline === "accepted" ? "#600" : color; })
      };
    });
    new Chart(canvas, {
      type: "scatter",
      data: { datasets: datasets },
      plugins: [intervalPlugin, changePlugin(data.changes || [])],
      options: {
        animation: false,
        maintainAspectRatio: false,
        parsing: false,
        normalized: true,
        scales: {
          x: { type: "linear", ticks: { callback: function (v) { return shortDate(v); }, maxTicksLimit: 8 } },
          y: { type: log ? "logarithmic" : "linear", title: { display: true, text: "median ms per call" } }
        },
        plugins: {
          tooltip: {
            callbacks: {
              label: function (item) {
                var p = item.raw;
                return "run " + p.run + " " + shortDate(p.x) + " " + p.y.toPrecision(4) + " ms" +
                  (p.baseline ? " (" + (p.baseline === "accepted" ? "accepted slowdown" : "baseline") + ")" : "") +
                  " " + (p.branch || "") + " " + (p.commit || "").slice(0, 8);
              }
            }
          }
        },
        onClick: function (event, elements, chart) {
          if (!elements.length) return;
          var el = elements[0];
          var href = runHref(chart.data.datasets[el.datasetIndex].data[el.index].run);
          if (href) window.location.href = href;
        },
        onHover: function (event, elements) {
          event.native.target.style.cursor = elements.length ? "pointer" : "default";
        }
      }
    });
  }

  // Strip chart: one column per worker process, base columns then head columns, a fixed jitter per sample.
  function drawStrip(canvas, config) {
    var datasets = [];
    var labels = [];
    var column = 0;
    [["base", config.base, baseColor], ["head", config.head, headColor]].forEach(function (side) {
      if (!side[1]) return;
      var pts = [];
      side[1].processes.forEach(function (samples, p) {
        labels[column] = side[0] + " p" + (p + 1);
        samples.forEach(function (v, k) {
          var jitter = ((k * 0.618034) % 1 - 0.5) * 0.5;
          pts.push({ x: column + jitter, y: v });
        });
        column += 1;
      });
      datasets.push({ label: side[0], data: pts, backgroundColor: side[2], borderColor: side[2], pointRadius: 2 });
    });
    new Chart(canvas, {
      type: "scatter",
      data: { datasets: datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        parsing: false,
        scales: {
          x: { type: "linear", min: -0.6, max: Math.max(column - 0.4, 0.6),
               ticks: { stepSize: 1, callback: function (v) { return labels[v] || ""; } } },
          y: { title: { display: true, text: "ms per call" } }
        },
        plugins: { tooltip: { callbacks: { label: function (item) {
          return item.dataset.label + " " + item.raw.y.toPrecision(4) + " ms"; } } } }
      }
    });
  }

  function drawRun(section, data) {
    var details = section.querySelectorAll("details.dist");
    details.forEach(function (d) {
      var config = data.configs[Number(d.getAttribute("data-index"))];
      var drawn = false;
      function draw() {
        if (drawn || !d.open) return;
        drawn = true;
        drawStrip(d.querySelector("canvas.strip-chart"), config);
      }
      d.addEventListener("toggle", draw);
      draw();
    });
  }

  function drawCompare(section, data) {
    var canvas = section.querySelector("canvas.compare-chart");
    if (!canvas) return;
    var labels = data.configs.map(function (c) { return c.config; });
    var datasets = data.runs.map(function (run, i) {
      return {
        label: "run " + run.id + " " + (run.device || run.env_id.slice(0, 12)),
        data: data.configs.map(function (c) { return c.ratio[i]; }),
        backgroundColor: palette[i % palette.length]
      };
    });
    new Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { y: { type: "logarithmic", title: { display: true, text: "time / first run (log)" } } }
      }
    });
  }

  function init() {
    document.querySelectorAll("section.rnx-page").forEach(function (section) {
      var kind = section.getAttribute("data-kind");
      if (kind === "error" || kind === "overview") return;
      var data = dataOf(section);
      if (kind === "history") drawHistory(section, data);
      else if (kind === "run") drawRun(section, data);
      else if (kind === "compare") drawCompare(section, data);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
