// rnx pages: draws the charts of every <section class="rnx-page"> from the JSON it carries (Chart.js 3, served by
// rnx-server or inlined in a report). Text and tables are rendered by the server; this file only draws.
(function () {
  "use strict";
  // One colour per environment, by its place in the project's list of environments (the server's "colour"), so a
  // filter never repaints a series. Red is kept for the accepted-slowdown marker alone.
  var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];
  var acceptedRed = "#d00000";
  var baseColor = "rgba(31, 119, 180, 0.55)";
  var headColor = "rgba(255, 127, 14, 0.65)";
  var hour = 3600 * 1000;
  var day = 24 * hour;
  var tickSteps = [hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour, day, 2 * day, 7 * day, 14 * day, 30 * day,
                   91 * day, 182 * day, 365 * day];

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

  function withAlpha(hex, alpha) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + ", " + ((n >> 8) & 255) + ", " + (n & 255) + ", " + alpha + ")";
  }

  function timeLabel(ms, step) {
    var iso = new Date(ms).toISOString();
    return step >= day ? iso.slice(0, 10) : iso.slice(5, 10) + " " + iso.slice(11, 16);
  }

  // Time ticks at whole hours or days (UTC), as many as fit: every label names a different date or time.
  function timeTicks(scale) {
    var span = scale.max - scale.min;
    var room = Math.max(2, Math.floor(scale.width / 95));
    var step = tickSteps[tickSteps.length - 1];
    for (var i = 0; i < tickSteps.length; i++) {
      if (span / tickSteps[i] <= room) { step = tickSteps[i]; break; }
    }
    var ticks = [];
    for (var t = Math.ceil(scale.min / step) * step; t <= scale.max; t += step) ticks.push({ value: t });
    if (!ticks.length) ticks.push({ value: scale.min });
    scale.rnxStep = step;
    scale.ticks = ticks;
  }

  // Vertical bars from lo to hi behind each point, with caps: the interval of every drawn median.
  var intervalPlugin = {
    id: "rnxIntervals",
    beforeDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      var y = chart.scales.y;
      chart.data.datasets.forEach(function (ds, di) {
        if (!ds.rnxIntervals || !chart.isDatasetVisible(di)) return;
        var meta = chart.getDatasetMeta(di);
        ctx.save();
        ctx.strokeStyle = withAlpha(ds.rnxColor, 0.7);
        ctx.lineWidth = 1.5;
        meta.data.forEach(function (el, i) {
          var p = ds.data[i];
          if (p.lo == null || p.hi == null) return;
          var top = y.getPixelForValue(p.hi);
          var bottom = y.getPixelForValue(p.lo);
          ctx.beginPath();
          ctx.moveTo(el.x, top);
          ctx.lineTo(el.x, bottom);
          ctx.moveTo(el.x - 3, top);
          ctx.lineTo(el.x + 3, top);
          ctx.moveTo(el.x - 3, bottom);
          ctx.lineTo(el.x + 3, bottom);
          ctx.stroke();
        });
        ctx.restore();
      });
    }
  };

  // Events across the whole chart (the history's "markers"): a dashed vertical line and its label at the top.
  var markerPlugin = {
    id: "rnxMarkers",
    afterDatasetsDraw: function (chart) {
      var markers = chart.options.plugins.rnxMarkers && chart.options.plugins.rnxMarkers.markers;
      if (!markers || !markers.length) return;
      var ctx = chart.ctx;
      var area = chart.chartArea;
      ctx.save();
      ctx.strokeStyle = "#57606a";
      ctx.fillStyle = "#57606a";
      ctx.setLineDash([4, 3]);
      ctx.font = "11px sans-serif";
      markers.forEach(function (m) {
        var x = chart.scales.x.getPixelForValue(Date.parse(m.t));
        if (!(x >= area.left && x <= area.right)) return;
        ctx.beginPath();
        ctx.moveTo(x, area.top);
        ctx.lineTo(x, area.bottom);
        ctx.stroke();
        if (m.label) ctx.fillText(String(m.label), x + 3, area.top + 11);
      });
      ctx.restore();
    }
  };

  // A run's number is the verdict's statistic (stat_ms); an unstable run draws no interval (its processes disagree,
  // so there is no one time to bound) and is marked with a cross instead.
  function historyPoint(p) {
    var unstable = p.unstable === true;
    return { x: Date.parse(p.t), y: p.stat_ms, lo: unstable ? null : p.stat_lo_ms, hi: unstable ? null : p.stat_hi_ms,
             run: p.run_id, baseline: p.baseline, accepted: p.accepted_slowdown === true, pr: p.pull_request,
             commit: p.commit, branch: p.branch, unstable: unstable, reason: p.unstable_reason || "" };
  }

  function pointStyleOf(p, plain) {
    return p.accepted ? "triangle" : p.unstable ? "crossRot" : p.baseline ? "rectRot" : plain;
  }

  // The baseline in force as a step line, and the band around it as two more steps filled between them.
  function baselineDatasets(series, color, name, lastTime, rope) {
    var steps = (series.baseline_steps || []).map(function (s) { return { x: Date.parse(s.t), y: s.stat_ms }; });
    if (!steps.length) return [];
    steps.push({ x: Math.max(lastTime, steps[steps.length - 1].x), y: steps[steps.length - 1].y });
    var scaled = function (f) { return steps.map(function (s) { return { x: s.x, y: s.y * f }; }); };
    var common = { showLine: true, stepped: "after", pointRadius: 0, pointHitRadius: 0, borderWidth: 1,
                   rnxHelper: true };
    return [
      Object.assign({ label: name + " band +", data: scaled(1 + rope), borderColor: withAlpha(color, 0.25),
                      backgroundColor: withAlpha(color, 0.12), fill: "+1", rnxBand: true }, common),
      Object.assign({ label: name + " band -", data: scaled(1 - rope), borderColor: withAlpha(color, 0.25),
                      backgroundColor: withAlpha(color, 0.12), fill: false, rnxBand: true }, common),
      Object.assign({ label: name + " baseline", data: steps, borderColor: color, borderDash: [6, 4],
                      borderWidth: 1.5, fill: false, rnxBaseline: true }, common, { borderWidth: 1.5 })
    ];
  }

  function historyDatasets(data) {
    var rope = typeof data.rope === "number" ? data.rope : 0.02;
    var out = [];
    (data.series || []).forEach(function (series) {
      var color = palette[(series.colour || 0) % palette.length];
      var name = series.env_id.slice(0, 12) + (series.device ? " " + series.device : "");
      var points = series.points.filter(function (p) { return p.stat_ms != null; }).map(historyPoint);
      var main = points.filter(function (p) { return p.pr == null; });
      var prs = points.filter(function (p) { return p.pr != null; });
      var last = points.length ? points[points.length - 1].x : 0;
      out = out.concat(baselineDatasets(series, color, name, last, rope));
      out.push({
        label: name, data: main, borderColor: color, backgroundColor: color, showLine: true, borderWidth: 1,
        rnxIntervals: true, rnxColor: color, order: -1,
        pointStyle: main.map(function (p) { return pointStyleOf(p, "circle"); }),
        pointRadius: main.map(function (p) { return p.accepted ? 8 : p.unstable ? 6 : p.baseline ? 4 : 2.5; }),
        pointBackgroundColor: main.map(function (p) { return p.accepted ? acceptedRed : color; }),
        pointBorderColor: main.map(function (p) { return p.accepted ? "#600" : color; })
      });
      out.push({
        label: name + " pull requests", data: prs, borderColor: color, backgroundColor: "#fff", showLine: false,
        rnxIntervals: true, rnxColor: color, rnxPullRequests: true, order: -1,
        pointStyle: prs.map(function (p) { return p.accepted ? "triangle" : p.unstable ? "crossRot" : "rect"; }),
        pointRadius: prs.map(function (p) { return p.accepted ? 8 : p.unstable ? 6 : 4; }),
        pointBorderWidth: 1.5,
        pointBackgroundColor: prs.map(function (p) { return p.accepted ? acceptedRed : "#fff"; }),
        pointBorderColor: prs.map(function (p) { return p.accepted ? "#600" : color; })
      });
    });
    return out;
  }

  // The value range of everything drawn (intervals and band included), so no bar is cut at the chart's edge.
  function valueRange(datasets) {
    var lo = Infinity;
    var hi = -Infinity;
    datasets.forEach(function (ds) {
      ds.data.forEach(function (p) {
        lo = Math.min(lo, p.lo != null ? p.lo : p.y, p.y);
        hi = Math.max(hi, p.hi != null ? p.hi : p.y, p.y);
      });
    });
    return isFinite(lo) ? { lo: lo, hi: hi } : null;
  }

  // One legend entry per environment and one for its pull requests, in the series' own colour (never a point's:
  // the first point may be the red accepted marker); the baseline and band are explained in the text below.
  function legendLabels(chart) {
    var out = [];
    chart.data.datasets.forEach(function (ds, i) {
      if (ds.rnxHelper) return;
      out.push({ text: ds.label, datasetIndex: i, hidden: !chart.isDatasetVisible(i), lineWidth: 1.5,
                 fillStyle: ds.rnxPullRequests ? "#fff" : ds.rnxColor, strokeStyle: ds.rnxColor });
    });
    return out;
  }

  function historyTooltip(item) {
    var p = item.raw;
    if (item.dataset.rnxHelper) {
      return item.dataset.label + " " + p.y.toPrecision(4) + " ms";
    }
    return "run " + p.run + " " + new Date(p.x).toISOString().slice(0, 16).replace("T", " ") + " " +
      p.y.toPrecision(4) + " ms" + (p.lo != null ? " [" + p.lo.toPrecision(4) + ", " + p.hi.toPrecision(4) + "]" : "") +
      (p.accepted ? " (accepted slowdown)" : p.baseline ? " (baseline)" : "") +
      (p.unstable ? " UNSTABLE" + (p.reason ? ": " + p.reason : "") : "") +
      (p.pr != null ? " PR #" + p.pr : "") + " " + (p.branch || "") + " " + (p.commit || "").slice(0, 8);
  }

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
    var datasets = historyDatasets(data);
    var range = valueRange(datasets);
    var pad = range ? (range.hi - range.lo) * 0.05 : 0;
    new Chart(canvas, {
      type: "scatter",
      data: { datasets: datasets },
      plugins: [intervalPlugin, markerPlugin, changePlugin(data.changes || [])],
      options: {
        animation: false,
        maintainAspectRatio: false,
        parsing: false,
        normalized: true,
        scales: {
          x: { type: "linear", afterBuildTicks: timeTicks,
               ticks: { autoSkip: false, maxRotation: 0,
                        callback: function (v) { return timeLabel(v, this.rnxStep); } },
               title: { display: true, text: "time (UTC)" } },
          y: { type: log ? "logarithmic" : "linear",
               title: { display: true, text: "ms per call (per-process median, geometric mean)" },
               suggestedMin: range ? (log ? range.lo / 1.05 : range.lo - pad) : undefined,
               suggestedMax: range ? (log ? range.hi * 1.05 : range.hi + pad) : undefined }
        },
        plugins: {
          legend: { labels: { generateLabels: legendLabels } },
          rnxMarkers: { markers: data.markers || [] },
          tooltip: { callbacks: { label: historyTooltip } }
        },
        onClick: function (event, elements, chart) {
          var hit = elements.filter(function (el) { return !chart.data.datasets[el.datasetIndex].rnxHelper; });
          if (!hit.length) return;
          var href = runHref(chart.data.datasets[hit[0].datasetIndex].data[hit[0].index].run);
          if (href) window.location.href = href;
        },
        onHover: function (event, elements, chart) {
          var hit = elements.filter(function (el) { return !chart.data.datasets[el.datasetIndex].rnxHelper; });
          event.native.target.style.cursor = hit.length ? "pointer" : "default";
        }
      }
    });
  }

  // Strip chart: one column per worker process, base columns then head columns, a fixed jitter per sample. The
  // time axis is logarithmic when the samples span more than 10x: on a linear axis one slow outlier puts every
  // other sample on the floor and hides a 4x gap between base and head; below 10x a linear axis reads directly.
  // The canvas records its scale (data-scale) for the browser test.
  function drawStrip(canvas, config) {
    var datasets = [];
    var labels = [];
    var column = 0;
    var lo = Infinity;
    var hi = -Infinity;
    [["base", config.base, baseColor], ["head", config.head, headColor]].forEach(function (side) {
      if (!side[1]) return;
      var pts = [];
      side[1].processes.forEach(function (samples, p) {
        labels[column] = side[0] + " p" + (p + 1);
        samples.forEach(function (v, k) {
          var jitter = ((k * 0.618034) % 1 - 0.5) * 0.5;
          pts.push({ x: column + jitter, y: v });
          if (v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
        });
        column += 1;
      });
      datasets.push({ label: side[0] + (side[1].unstable ? " (unstable)" : ""), data: pts,
                      backgroundColor: side[2], borderColor: side[2], pointRadius: 2 });
    });
    var log = isFinite(lo) && hi / lo > 10;
    canvas.setAttribute("data-scale", log ? "log" : "linear");
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
          y: log ? { type: "logarithmic", min: lo / 1.2, max: hi * 1.2,
                     title: { display: true, text: "ms per call (log)" } }
                 : { title: { display: true, text: "ms per call" } }
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

  // Whiskers over the compare bars: each ratio's 95% interval.
  var whiskerPlugin = {
    id: "rnxWhiskers",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      var y = chart.scales.y;
      chart.data.datasets.forEach(function (ds, di) {
        if (!chart.isDatasetVisible(di)) return;
        chart.getDatasetMeta(di).data.forEach(function (bar, i) {
          var lo = ds.rnxLo[i];
          var hi = ds.rnxHi[i];
          if (lo == null || hi == null) return;
          ctx.save();
          ctx.strokeStyle = "#1d2329";
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(bar.x, y.getPixelForValue(lo));
          ctx.lineTo(bar.x, y.getPixelForValue(hi));
          ctx.moveTo(bar.x - 4, y.getPixelForValue(lo));
          ctx.lineTo(bar.x + 4, y.getPixelForValue(lo));
          ctx.moveTo(bar.x - 4, y.getPixelForValue(hi));
          ctx.lineTo(bar.x + 4, y.getPixelForValue(hi));
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };

  // The log axis around 1.0 and every bar and whisker, with a little room: not down to the next power of ten.
  function ratioBounds(datasets) {
    var lo = 1;
    var hi = 1;
    datasets.forEach(function (ds) {
      ds.data.forEach(function (v, i) {
        if (v === null) return;
        lo = Math.min(lo, v[1], ds.rnxLo[i] == null ? v[1] : ds.rnxLo[i]);
        hi = Math.max(hi, v[1], ds.rnxHi[i] == null ? v[1] : ds.rnxHi[i]);
      });
    });
    return { lo: lo / 1.15, hi: hi * 1.15 };
  }

  // Bars from 1.0 (the first run) to each other run's ratio, on a log axis: up is slower, down faster.
  function drawCompare(section, data) {
    var canvas = section.querySelector("canvas.compare-chart");
    if (!canvas) return;
    var labels = data.configs.map(function (c) { return c.config; });
    var datasets = data.runs.slice(1).map(function (run, k) {
      var i = k + 1;
      return {
        label: "run " + run.id + " " + (run.device || run.env_id.slice(0, 12)) + " / run " + data.runs[0].id,
        data: data.configs.map(function (c) { return c.cells[i].ratio == null ? null : [1, c.cells[i].ratio]; }),
        rnxLo: data.configs.map(function (c) { return c.cells[i].ratio_lo; }),
        rnxHi: data.configs.map(function (c) { return c.cells[i].ratio_hi; }),
        rnxUnstable: data.configs.map(function (c) { return c.cells[i].unstable || c.cells[0].unstable; }),
        backgroundColor: palette[i % palette.length]
      };
    });
    new Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: datasets },
      plugins: [whiskerPlugin],
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { y: { type: "logarithmic", min: ratioBounds(datasets).lo, max: ratioBounds(datasets).hi,
                       title: { display: true, text: "time / first run (log; 1 = same)" } } },
        plugins: { tooltip: { callbacks: { label: function (item) {
          var ds = item.dataset;
          var i = item.dataIndex;
          var r = item.raw ? item.raw[1] : null;
          return ds.label + ": " + (r == null ? "-" : r.toFixed(3) + "x") +
            (ds.rnxUnstable[i] ? " (unstable: no interval)" :
              ds.rnxLo[i] != null ? " (95% " + ds.rnxLo[i].toFixed(3) + " to " + ds.rnxHi[i].toFixed(3) + ")" : "");
        } } } }
      }
    });
  }

  function init() {
    document.querySelectorAll("section.rnx-page").forEach(function (section) {
      var kind = section.getAttribute("data-kind");
      if (kind === "error" || kind === "overview" || kind === "landing" || kind === "proof") return;
      var data = dataOf(section);
      if (kind === "history") drawHistory(section, data);
      else if (kind === "run") drawRun(section, data);
      else if (kind === "compare") drawCompare(section, data);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
