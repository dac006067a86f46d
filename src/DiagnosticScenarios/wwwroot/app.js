'use strict';

const palette = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777', '#4b5563'];
// The palette's colours solid, then dashed, then dotted: 27 endpoints told apart before a style repeats.
const dashes = [[], [10, 6], [2, 4]];
const keepSeconds = 300;
const keepArrivals = 3600;
const loadPollMs = 1000;
const slide = { width: 1920, height: 1080 };
const starvedShade = 'rgba(220, 38, 38, 0.14)';
const loadStartColor = '#16a34a';
const loadEndColor = '#6b7280';

const state = {
  samples: [],
  controlsAt: '',
  // Each endpoint's line style, { color, dash }, in the order the endpoints first showed.
  styles: new Map(),
  // Every load run this page has seen, by start time: each leaves its marks on the charts while they show its time.
  loads: new Map(),
  latestLoad: null,
  peakThreads: 0,
  peakQueueDelayMs: 0,
  starvedSeconds: 0,
  // The app's runs this page has shown: a restart while it stays open starts the next.
  runs: 1,
  streamOpenedAt: 0,
  renderQueued: false,
};

// What the page measured about itself, read by the browser tests and handy in the console: when its stream opened, when
// each sample was taken and when it arrived here (live: taken after the stream opened, not replayed from the backlog),
// each export, and how many unbroken pieces of line each chart drew last.
window.livePage = { streamOpenedAt: 0, arrivals: [], exports: [], pieces: {} };

const $ = (id) => document.getElementById(id);

function styleOf(route) {
  if (!state.styles.has(route)) {
    const i = state.styles.size;
    state.styles.set(route, { color: palette[i % palette.length], dash: dashes[Math.floor(i / palette.length) % dashes.length] });
  }
  return state.styles.get(route);
}

const pad = (n) => String(n).padStart(2, '0');
const clock = (t) => { const d = new Date(t); return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`; };
const whole = (v) => Math.round(v).toLocaleString('en-US');
const shortName = (scenario) => scenario.slice(scenario.lastIndexOf('/') + 1);

function series(color, value) {
  return { color, dash: [], points: state.samples.map((s) => ({ t: s.unixTimeMs, sequence: s.sequence, y: value(s) })) };
}

function endpointSeries(field) {
  const routes = new Set(state.samples.flatMap((s) => s.endpoints.map((e) => e.route)));
  return [...routes].map((route) => ({
    ...styleOf(route),
    points: state.samples.map((s) => ({ t: s.unixTimeMs, sequence: s.sequence, y: s.endpoints.find((e) => e.route === route)?.[field] ?? 0 })),
  }));
}

// The tutorial's signature, one chart each: threads climbing, a long queue, few completions, CPU well under 100 %.
const charts = [
  { id: 'chart-threads', title: 'Pool threads (grey: the minimum)', series: () => [series('#2563eb', (s) => s.threadCount), series('#9ca3af', (s) => s.minWorkerThreads)] },
  { id: 'chart-queue-length', title: 'Queue length (work items waiting)', series: () => [series('#ea580c', (s) => s.pendingWorkItems)] },
  { id: 'chart-completed', title: 'Completed work items per second', series: () => [series('#16a34a', (s) => s.completedWorkItemsPerSecond)] },
  { id: 'chart-cpu', title: 'Process CPU, % of all processors', max: 100, series: () => [series('#9333ea', (s) => s.cpuPercent)] },
  { id: 'chart-queue-delay', title: 'Queue delay, ms', series: () => [series('#dc2626', (s) => s.queueDelayMs)] },
  { id: 'chart-rps', title: 'Requests per second, per endpoint', series: () => endpointSeries('completed') },
  { id: 'chart-latency', title: 'Average latency per endpoint, ms', series: () => endpointSeries('latencyAvgMs') },
];

const screenStyle = { font: '11px system-ui, sans-serif', markFont: '10px system-ui, sans-serif', lineWidth: 2, axisWidth: 44, axisHeight: 16, titleHeight: 0 };
const slideStyle = { font: '15px system-ui, sans-serif', markFont: '14px system-ui, sans-serif', titleFont: '600 18px system-ui, sans-serif', lineWidth: 3, axisWidth: 60, axisHeight: 24, titleHeight: 30 };

// The time every chart shows, up to the latest sample: what has been received (at most keepSeconds), at least half a
// minute, so a fresh app's first seconds spread over the whole width.
function timeView() {
  const to = state.samples.length ? state.samples[state.samples.length - 1].unixTimeMs : Date.now();
  const from = state.samples.length ? state.samples[0].unixTimeMs : to;
  return { from: Math.min(from, to - 30000), to };
}

// A round top for the y axis, so its four steps read as plain numbers.
function niceMax(value) {
  if (value <= 1) {
    return 1;
  }
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 4, 6, 8, 10].map((m) => m * power).find((m) => m >= value);
}

const tick = (v) => (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(v < 10 ? 2 : 1).replace(/\.?0+$/, ''));

// One chart in a box of ctx (CSS pixels on screen, slide pixels in the export): starved seconds shaded behind the grid,
// the load runs' marks, then the lines.
function drawChart(ctx, box, chart, view, style) {
  const lines = chart.series();
  const left = box.x + style.axisWidth;
  const right = box.x + box.w - 8;
  const top = box.y + style.titleHeight + 8;
  const bottom = box.y + box.h - style.axisHeight;
  const shown = lines.flatMap((s) => s.points.filter((p) => p.t >= view.from).map((p) => p.y));
  const max = chart.max ?? niceMax(Math.max(0, ...shown) * 1.05);
  const x = (t) => left + ((t - view.from) / (view.to - view.from)) * (right - left);
  const y = (v) => bottom - (Math.min(v, max) / max) * (bottom - top);

  ctx.save();
  if (style.titleFont) {
    ctx.font = style.titleFont;
    ctx.fillStyle = '#1d2330';
    ctx.textBaseline = 'alphabetic';
    ctx.fillText(chart.title, box.x + 4, box.y + style.titleHeight - 6);
  }

  // A starved sample speaks for the second that ended when it was taken.
  ctx.fillStyle = starvedShade;
  for (const s of state.samples) {
    if (s.starved && s.unixTimeMs > view.from) {
      const from = Math.max(left, x(s.unixTimeMs - 1000));
      ctx.fillRect(from, top, x(s.unixTimeMs) - from, bottom - top);
    }
  }

  ctx.font = style.font;
  ctx.lineWidth = 1;
  ctx.strokeStyle = '#e5e7eb';
  ctx.fillStyle = '#5a6270';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    ctx.beginPath(); ctx.moveTo(left, y(v)); ctx.lineTo(right, y(v)); ctx.stroke();
    ctx.fillText(tick(v), left - 5, y(v));
  }
  ctx.textBaseline = 'top';
  for (let i = 0; i <= 3; i++) {
    const t = view.from + ((view.to - view.from) / 3) * i;
    ctx.textAlign = i === 0 ? 'left' : i === 3 ? 'right' : 'center';
    ctx.fillText(clock(t), x(t), bottom + 4);
  }

  ctx.font = style.markFont;
  for (const run of state.loads.values()) {
    mark(ctx, x, view, { top, bottom, right }, Date.parse(run.startedAt), loadStartColor, `▶ ${shortName(run.scenario)}`, 0);
    if (run.endedAt) {
      mark(ctx, x, view, { top, bottom, right }, Date.parse(run.endedAt), loadEndColor, '■ end', 1);
    }
  }

  ctx.lineWidth = style.lineWidth;
  ctx.lineJoin = 'round';
  let pieces = 0;
  for (const s of lines) {
    const points = s.points.filter((p) => p.t >= view.from);
    ctx.strokeStyle = s.color;
    ctx.setLineDash(s.dash.map((d) => d * style.lineWidth / 2));
    ctx.beginPath();
    // A line joins consecutive samples only: where the stream missed some (a reconnect after the app's history had moved
    // on), the chart shows the gap rather than a straight line across it.
    points.forEach((p, i) => {
      if (i === 0 || p.sequence !== points[i - 1].sequence + 1) {
        ctx.moveTo(x(p.t), y(p.y));
        pieces += 1;
      } else {
        ctx.lineTo(x(p.t), y(p.y));
      }
    });
    ctx.stroke();
  }
  ctx.restore();
  return pieces;
}

// A dashed vertical line at t, labelled on its own row (a short run's end mark sits close to its start), on the side of
// the line where the label fits in the plot.
function mark(ctx, x, view, plot, t, color, label, row) {
  if (t < view.from || t > view.to) {
    return;
  }
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = 2;
  ctx.setLineDash([6, 4]);
  ctx.beginPath(); ctx.moveTo(x(t), plot.top); ctx.lineTo(x(t), plot.bottom); ctx.stroke();
  ctx.setLineDash([]);
  ctx.textBaseline = 'top';
  const fits = x(t) + 3 + ctx.measureText(label).width <= plot.right;
  ctx.textAlign = fits ? 'left' : 'right';
  ctx.fillText(label, fits ? x(t) + 3 : x(t) - 3, plot.top + 1 + row * parseInt(ctx.font, 10) * 1.3);
}

// Each canvas's backing store matches its CSS size times the screen's pixel ratio, so lines and text stay sharp on a
// high-DPI screen or projector; drawing is in CSS pixels.
function renderCharts() {
  const view = timeView();
  const ratio = window.devicePixelRatio || 1;
  for (const chart of charts) {
    const canvas = $(chart.id);
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (!width || !height) {
      continue;
    }
    const backing = { w: Math.round(width * ratio), h: Math.round(height * ratio) };
    if (canvas.width !== backing.w || canvas.height !== backing.h) {
      canvas.width = backing.w;
      canvas.height = backing.h;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    window.livePage.pieces[chart.id] = drawChart(ctx, { x: 0, y: 0, w: width, h: height }, chart, view, screenStyle);
  }
  document.body.dataset.pixelRatio = ratio;
}

function render() {
  state.renderQueued = false;
  const last = state.samples[state.samples.length - 1];
  if (!last) {
    return;
  }

  $('thread-count').textContent = last.threadCount;
  $('min-workers-now').textContent = last.minWorkerThreads;
  $('pending').textContent = whole(last.pendingWorkItems);
  $('completed').textContent = whole(last.completedWorkItemsPerSecond);
  $('cpu').textContent = `${last.cpuPercent.toFixed(0)} %`;
  $('queue-delay').textContent = `${whole(last.queueDelayMs)} ms`;
  $('injections-starvation').textContent = last.injections.starvation;
  $('injections-cooperative').textContent = last.injections.cooperativeBlocking;
  const status = $('status');
  status.dataset.state = last.starved ? 'starved' : 'healthy';
  // The rule's own words: its evidence when starved, otherwise the first condition that failed.
  status.textContent = last.starved ? `STARVED: ${last.starvation}` : `healthy: ${last.starvation.split(':')[0]}`;

  renderCharts();
  $('legend').replaceChildren(...[...state.styles].map(([route, { color, dash }]) => {
    const span = document.createElement('span');
    const swatch = document.createElement('i');
    // A piece of the line as the charts draw it: solid, dashed or dotted.
    swatch.style.background = dash.length ? `repeating-linear-gradient(90deg, ${color} 0 ${dash[0]}px, transparent ${dash[0]}px ${dash[0] + dash[1]}px)` : color;
    span.append(swatch, route);
    return span;
  }));

  const rows = last.endpoints.map((e) => {
    const tr = document.createElement('tr');
    if (e.holdingThread > 0 || e.holdAvgMs >= 50) {
      tr.className = 'holder';
    }
    for (const v of [e.route, e.inFlight, e.holdingThread, e.completed, e.latencyAvgMs, e.holdAvgMs]) {
      const td = document.createElement('td');
      td.textContent = v;
      tr.append(td);
    }
    return tr;
  });
  $('endpoints').tBodies[0].replaceChildren(...rows);

  // Read by the browser tests and handy in the console: what the page has drawn, and the peaks since it opened.
  document.body.dataset.samples = state.samples.length;
  document.body.dataset.latestSample = last.unixTimeMs;
  document.body.dataset.peakThreads = state.peakThreads;
  document.body.dataset.peakQueueDelayMs = state.peakQueueDelayMs;
  document.body.dataset.starvedSeconds = state.starvedSeconds;
  document.body.dataset.runs = state.runs;
}

// A page that opens receives five minutes of samples at once: they are drawn once, at the next frame, not once each.
function scheduleRender() {
  if (!state.renderQueued) {
    state.renderQueued = true;
    requestAnimationFrame(render);
  }
}

function onSample(event) {
  const receivedAt = Date.now();
  const sample = JSON.parse(event.data);
  const last = state.samples[state.samples.length - 1];
  if (last && sample.runId === last.runId && sample.sequence <= last.sequence) {
    return; // one the page has already
  }
  if (last && sample.runId !== last.runId) {
    // Another run: the app restarted while the page stayed open, and the server sends the new run's samples from its
    // first, however long either run has been going. The old run's figures end here.
    state.samples = [];
    state.peakThreads = 0;
    state.peakQueueDelayMs = 0;
    state.starvedSeconds = 0;
    state.runs += 1;
  }
  const arrivals = window.livePage.arrivals;
  arrivals.push({ sequence: sample.sequence, takenAt: sample.unixTimeMs, receivedAt, live: sample.unixTimeMs >= state.streamOpenedAt });
  if (arrivals.length > keepArrivals) {
    arrivals.shift();
  }
  state.samples.push(sample);
  state.peakThreads = Math.max(state.peakThreads, sample.threadCount);
  state.peakQueueDelayMs = Math.max(state.peakQueueDelayMs, sample.queueDelayMs);
  state.starvedSeconds += sample.starved ? 1 : 0;
  while (state.samples.length > keepSeconds) {
    state.samples.shift();
  }
  scheduleRender();
}

// The app's controls answer only requests that carry this header, which a foreign page cannot send without a preflight.
const controlHeaders = { 'X-DiagnosticScenarios-Control': '1' };

// The controls live on the app itself; a page served by its own server sends them there (the app's CORS policy admits it).
async function call(method, url) {
  let response;
  try {
    response = await fetch(state.controlsAt + url, { method, headers: controlHeaders, mode: 'cors' });
  } catch (e) {
    // No answer at all (the app stopped or restarting, a refused preflight): say so where the answer would have shown.
    return { ok: false, body: {}, text: `No answer from the app at ${state.controlsAt || location.origin}: ${e.message ?? e}` };
  }
  const body = await response.json().catch(() => ({}));
  const text = response.ok ? JSON.stringify(body, null, 2) : `${response.status} ${body.title ?? response.statusText}${body.detail ? `: ${body.detail}` : ''}`;
  return { ok: response.ok, body, text };
}

function field(name, text) {
  document.querySelector(`#load-result [data-field="${name}"]`).textContent = text;
}

// The load run as the page's own server reports it: running, or ended with the runner's own figures, or failed.
function showLoad(run) {
  if (!run) {
    return;
  }
  state.loads.set(run.startedAt, run);
  state.latestLoad = run;
  const box = $('load-run');
  const what = `${run.scenario}, ${run.connections} connections for ${run.durationSeconds} s`;
  const started = clock(Date.parse(run.startedAt));
  const result = $('load-result');
  if (run.running) {
    box.dataset.state = 'running';
    $('load-status').textContent = `Running: ${what}, since ${started} (runner process ${run.processId}).`;
    result.hidden = true;
  } else if (run.result) {
    const r = run.result;
    box.dataset.state = 'ended';
    $('load-status').textContent = `Ended: ${what}, ${started}–${clock(Date.parse(run.endedAt))}. The runner's own figures:`;
    field('requestsPerSecond', r.requestsPerSecond.toFixed(1));
    field('latencyAverageMs', `${whole(r.latency.average)} ms`);
    field('latencyP99Ms', `${whole(r.latency.p99)} ms`);
    field('failures', r.failures === 0 ? '0' : `${whole(r.failures)} (${whole(r.timeouts)} timed out)`);
    field('completed', `${whole(r.completed)} of ${whole(r.sent)}`);
    result.hidden = false;
  } else {
    box.dataset.state = 'failed';
    $('load-status').textContent = `Ended without figures: ${what}, started ${started}. ${run.error || `The runner exited with code ${run.exitCode}.`}`;
    result.hidden = true;
  }
  scheduleRender();
}

// Polled from the page's own origin, off the pool when the page is: the run's end shows while the app is still starved.
async function pollLoad() {
  try {
    const response = await fetch('/api/threadpool/load');
    if (response.ok) {
      showLoad((await response.json()).current);
    }
  } catch {
    // The next poll tries again.
  }
  setTimeout(pollLoad, loadPollMs);
}

// The charts composed on one 16:9 canvas, the size of a slide, and saved as a PNG.
async function exportPng() {
  const canvas = document.createElement('canvas');
  canvas.width = slide.width;
  canvas.height = slide.height;
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, slide.width, slide.height);

  const view = timeView();
  const run = state.latestLoad;
  ctx.fillStyle = '#1d2330';
  ctx.font = '600 30px system-ui, sans-serif';
  ctx.fillText(`Thread-pool health${run ? ` — ${run.scenario}, ${run.connections} connections` : ''}`, 30, 48);
  ctx.font = '18px system-ui, sans-serif';
  ctx.fillStyle = '#5a6270';
  ctx.fillText(`${new Date(view.from).toLocaleDateString('en-CA')} ${clock(view.from)}–${clock(view.to)}${run?.result ? ` · the runner: ${loadSummary(run.result)}` : ''}`, 30, 80);

  const columns = 4;
  const top = 100;
  const gap = 16;
  const w = (slide.width - 30 * 2 - gap * (columns - 1)) / columns;
  const h = (slide.height - top - 20 - gap) / 2;
  const cell = (i) => ({ x: 30 + (i % columns) * (w + gap), y: top + Math.floor(i / columns) * (h + gap), w, h });
  charts.forEach((chart, i) => drawChart(ctx, cell(i), chart, view, slideStyle));
  const keyCell = cell(charts.length);
  const key = drawKey(ctx, keyCell);

  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  const d = new Date();
  const name = `thread-pool-${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}-${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}.png`;
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  window.livePage.exports.push({ name, width: canvas.width, height: canvas.height, bytes: blob.size, key: { ...key, cellBottom: keyCell.y + keyCell.h } });
  $('export-status').textContent = `Saved ${name} (${canvas.width}×${canvas.height}, ${Math.round(blob.size / 1024)} KB).`;
}

const loadSummary = (r) => `${r.requestsPerSecond.toFixed(1)} req/s, average ${whole(r.latency.average)} ms, p99 ${whole(r.latency.p99)} ms, ${whole(r.failures)} errors`;

// The slide's eighth cell: what the colours, the shading and the marks mean. Its rows close up to fit more endpoints; those
// that still do not fit are counted on its last row. Returns how many endpoints it names and how many it counts.
function drawKey(ctx, box) {
  ctx.save();
  ctx.font = '600 18px system-ui, sans-serif';
  ctx.fillStyle = '#1d2330';
  ctx.fillText('Key', box.x + 4, box.y + 24);
  ctx.font = '15px system-ui, sans-serif';
  const fixedRows = 3;
  const routes = [...state.styles];
  // From the first row's top (its baseline 56 px down, its swatch 12 px above that) to the cell's bottom.
  const space = box.h - 44;
  const step = Math.max(22, Math.min(28, space / (fixedRows + routes.length)));
  const fits = Math.floor(space / step) - fixedRows;
  const named = routes.length <= fits ? routes.length : fits - 1;
  let y = box.y + 56;
  const row = (draw, text) => {
    draw(box.x + 4, y - 12);
    ctx.fillStyle = '#1d2330';
    ctx.fillText(text, box.x + 40, y);
    y += step;
  };
  row((x0, y0) => { ctx.fillStyle = starvedShade; ctx.fillRect(x0, y0, 26, 16); }, 'the detector declared starvation');
  row((x0, y0) => { ctx.fillStyle = loadStartColor; ctx.fillRect(x0 + 11, y0 - 2, 3, 20); }, 'a load run started');
  row((x0, y0) => { ctx.fillStyle = loadEndColor; ctx.fillRect(x0 + 11, y0 - 2, 3, 20); }, 'a load run ended');
  for (const [route, { color, dash }] of routes.slice(0, named)) {
    row((x0, y0) => {
      ctx.strokeStyle = color;
      ctx.lineWidth = slideStyle.lineWidth;
      ctx.setLineDash(dash.map((d) => d * slideStyle.lineWidth / 2));
      ctx.beginPath(); ctx.moveTo(x0, y0 + 7); ctx.lineTo(x0 + 26, y0 + 7); ctx.stroke();
      ctx.setLineDash([]);
    }, route);
  }
  const counted = routes.length - named;
  if (counted > 0) {
    row(() => {}, `… and ${counted} more endpoint${counted === 1 ? '' : 's'}: the page's legend names them`);
  }
  ctx.restore();
  return { named, counted, bottom: y - step + 6 };
}

// The load control's choices and their one-line explanations come from the app's scenario catalogue.
function explanation(scenario) {
  const verdict = scenario.verdict === 'baseline' ? 'Baseline' : scenario.verdict;
  return `${verdict}: ${scenario.pattern}. ${scenario.why.charAt(0).toUpperCase()}${scenario.why.slice(1)}.`;
}

async function wireControls() {
  const select = $('load-scenario');
  const list = $('scenarios');
  const catalogue = await (await fetch('/api/scenarios')).json();
  const loadable = new Set(catalogue.families.filter((f) => f.loadable).map((f) => f.name));
  const explanations = new Map();
  for (const scenario of catalogue.scenarios.filter((s) => loadable.has(s.family))) {
    const route = scenario.route.replace(/^\/api\//, '');
    explanations.set(route, explanation(scenario));
    select.append(new Option(route, route));
    const dt = document.createElement('dt');
    dt.textContent = scenario.route;
    const dd = document.createElement('dd');
    dd.textContent = explanations.get(route);
    list.append(dt, dd);
  }
  const explain = () => { $('scenario-explanation').textContent = explanations.get(select.value) ?? ''; };
  select.addEventListener('change', explain);
  explain();

  // A run's bounds and defaults are the app's, the ones it holds a request to.
  const { limits } = await (await fetch('/api/threadpool/load')).json();
  for (const [id, value, max] of [
    ['load-connections', limits.defaultConnections, limits.maxConnections],
    ['load-duration', limits.defaultDurationSeconds, limits.maxDurationSeconds],
  ]) {
    $(id).max = max;
    $(id).value = value;
  }

  $('load-start').addEventListener('click', async () => {
    const query = new URLSearchParams({
      scenario: select.value,
      connections: $('load-connections').value,
      durationSeconds: $('load-duration').value,
    });
    const answer = await call('POST', `/api/threadpool/load?${query}`);
    if (answer.ok) {
      showLoad(answer.body);
    } else {
      $('load-status').textContent = `The load did not start: ${answer.text}`;
    }
  });
  $('load-stop').addEventListener('click', async () => {
    const answer = await call('DELETE', '/api/threadpool/load');
    if (!answer.ok) {
      $('load-status').textContent = `The load did not stop: ${answer.text}`;
    }
  });
  $('minthreads-apply').addEventListener('click', async () => {
    $('minthreads-status').textContent = (await call('PUT', `/api/threadpool/minthreads?workers=${encodeURIComponent($('min-workers').value)}`)).text;
  });
  $('minthreads-reset').addEventListener('click', async () => {
    $('minthreads-status').textContent = (await call('DELETE', '/api/threadpool/minthreads')).text;
  });
  $('export-png').addEventListener('click', exportPng);

  // Until now a press would have gone nowhere (no listener yet) or to the wrong server (the app's address not yet known).
  for (const button of document.querySelectorAll('button[data-needs-wiring]')) {
    button.disabled = false;
  }
}

// Where the page came from decides whether it can stay live: its own server's threads, or the pool it reports on.
function showServed(settings) {
  const served = $('served');
  served.dataset.served = settings.servedOffThePool ? 'off-the-pool' : 'through-the-app';
  if (settings.servedOffThePool) {
    served.textContent = `Served on the app's own threads, not its thread pool: this page stays live while the pool starves. Its controls go to the app at ${settings.controlsAt}.`;
  } else if (settings.livePage) {
    served.textContent = 'Served through the app\'s thread pool: this copy goes dark while the pool starves. The live page, on threads of the app\'s own, is at ';
    const link = document.createElement('a');
    link.href = settings.livePage;
    link.textContent = settings.livePage;
    served.append(link, '.');
  } else {
    served.textContent = 'Served through the app\'s thread pool, because the live page\'s own server is not listening (its port was taken: the app\'s log says which). '
      + 'This page goes dark while the pool starves. Set LivePage:Port to a free port and restart the app.';
  }
}

async function start() {
  try {
    const settings = await (await fetch('/api/threadpool/page')).json();
    state.controlsAt = settings.controlsAt;
    showServed(settings);
  } catch {
    $('status').textContent = 'the /api/threadpool API does not answer (ThreadPoolHealth:Enabled is false?)';
    return;
  }
  await wireControls();
  pollLoad();
  window.addEventListener('resize', scheduleRender);
  // EventSource reconnects by itself and sends Last-Event-ID, so the server replays what was missed.
  const stream = new EventSource('/api/threadpool/stream');
  stream.addEventListener('open', () => { state.streamOpenedAt = window.livePage.streamOpenedAt = Date.now(); });
  stream.addEventListener('sample', onSample);
  stream.addEventListener('error', () => {
    $('status').dataset.state = 'connecting';
    $('status').textContent = 'reconnecting…';
  });
}

start();
