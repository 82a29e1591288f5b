// Charts drawn as SVG by the page itself (no library, nothing loaded): a bar per variant for the
// win rate, and the moves of each win over time. Each chart is an image with a title and a
// description for screen readers; the numbers are also in the table beside it. Sizes are in
// viewBox units, so a chart scales to the width it has (360 px phones included); colours are
// classes in app.css (the CSP allows no style attributes).

const SVG = "http://www.w3.org/2000/svg";
let serial = 0;

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

/** An <svg role="img"> with its title and description (aria-labelledby both). */
function frame(width, height, title, description, className) {
  serial += 1;
  const titleId = `chart-title-${serial}`;
  const descId = `chart-desc-${serial}`;
  return svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, class: `chart ${className}`, role: "img", "aria-labelledby": `${titleId} ${descId}`, preserveAspectRatio: "xMidYMid meet" },
    svg("title", { id: titleId }, title),
    svg("desc", { id: descId }, description),
  );
}

// About the width of a character of the charts' text (11 px, 10 px for ticks and the legend),
// in viewBox units, to lay out texts that must not run into each other or off the chart.
const CHAR_W = 6.4;
const TICK_CHAR_W = 5.8;

/**
 * Horizontal bars, one per row: `rows` [{key, label, value: 0..1 or null, text}], `value` null
 * drawn as an empty track ("no games yet"). `title` and `description` are already worded.
 * Each row's label and figures stand above its bar, the whole width for them: a variant's name
 * and its figures take more room in Hungarian or Romanian than beside a bar, on a phone.
 */
export function barChart(rows, { title, description }) {
  const width = 320;
  const rowHeight = 36;
  const root = frame(width, rows.length * rowHeight + 4, title, description, "bars");
  rows.forEach((row, i) => {
    const y = 2 + i * rowHeight;
    const filled = row.value === null ? 0 : Math.max(0, Math.min(1, row.value)) * width;
    // A label too long to leave room for the figures is shortened with an ellipsis.
    const room = Math.floor((width - 10) / CHAR_W) - row.text.length;
    const label = row.label.length > room ? `${row.label.slice(0, Math.max(room - 1, 4))}…` : row.label;
    root.append(
      svg(
        "g",
        { class: "bar-row", "data-key": row.key, "data-value": row.value === null ? "" : row.value.toFixed(4) },
        svg("text", { x: 0, y: y + 12, class: "label" }, label),
        svg("text", { x: width, y: y + 12, class: "value", "text-anchor": "end" }, row.text),
        svg("rect", { x: 0, y: y + 17, width, height: 14, rx: 4, class: "track" }),
        svg("rect", { x: 0, y: y + 17, width: filled.toFixed(1), height: 14, rx: 4, class: `fill series-${i}` }),
      ),
    );
  });
  return root;
}

/** The legend's entries in as many lines as they need: [{x, line}] for each name. */
function legendPlaces(names, left, right) {
  let x = left;
  let line = 0;
  return names.map((name) => {
    const wide = 13 + TICK_CHAR_W * name.length + 12;
    if (x > left && x + wide > right) {
      x = left;
      line += 1;
    }
    const place = { x, line };
    x += wide;
    return place;
  });
}

function niceMax(value) {
  if (value <= 10) return 10;
  const step = 10 ** Math.floor(Math.log10(value));
  return Math.ceil(value / step) * step;
}

/**
 * Points over time joined per series: `series` [{key, label, points: [{x: ms, y}]}] (each
 * sorted by x), `formatX(ms)` for the axis ends, `yLabel` the axis's name.
 */
export function timeChart(series, { title, description, formatX, yLabel }) {
  const width = 320;
  const shown = series.filter((s) => s.points.length);
  const places = legendPlaces(shown.map((s) => s.label), 4, width);
  const lines = places.length ? places[places.length - 1].line + 1 : 1;
  const height = 176 + 14 * lines;
  const pad = { left: 34, right: 10, top: 22, bottom: 26 + 14 * lines };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const all = series.flatMap((s) => s.points);
  const root = frame(width, height, title, description, "lines");
  const xMin = Math.min(...all.map((p) => p.x));
  const xMax = Math.max(...all.map((p) => p.x));
  const yMax = niceMax(Math.max(...all.map((p) => p.y)));
  const sx = (x) => pad.left + (xMax === xMin ? plotW / 2 : ((x - xMin) / (xMax - xMin)) * plotW);
  const sy = (y) => pad.top + plotH - (y / yMax) * plotH;
  const axes = svg("g", { class: "axes" });
  for (const tick of [0, yMax / 2, yMax]) {
    axes.append(
      svg("line", { x1: pad.left, x2: width - pad.right, y1: sy(tick), y2: sy(tick), class: "grid" }),
      svg("text", { x: pad.left - 4, y: sy(tick) + 4, class: "tick", "text-anchor": "end" }, String(Math.round(tick))),
    );
  }
  axes.append(
    svg("text", { x: pad.left, y: height - pad.bottom + 16, class: "tick" }, formatX(xMin)),
    svg("text", { x: width - pad.right, y: height - pad.bottom + 16, class: "tick", "text-anchor": "end" }, formatX(xMax)),
    svg("text", { x: 4, y: 10, class: "tick axis-name" }, yLabel),
  );
  root.append(axes);
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const path = s.points.map((p, k) => `${k ? "L" : "M"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ");
    const group = svg("g", { class: `series series-${i}`, "data-key": s.key, "data-points": String(s.points.length) });
    group.append(svg("path", { d: path, class: "line" }));
    for (const p of s.points) group.append(svg("circle", { cx: sx(p.x).toFixed(1), cy: sy(p.y).toFixed(1), r: 3, class: "dot" }));
    root.append(group);
    const place = places[shown.indexOf(s)];
    const y = height - 14 * (lines - place.line);
    root.append(
      svg("rect", { x: place.x, y: y + 1, width: 10, height: 10, class: `fill series-${i}` }),
      svg("text", { x: place.x + 13, y: y + 10, class: "tick legend" }, s.label),
    );
  });
  return root;
}
