'use strict';

const palette = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777', '#4b5563'];
const keepSeconds = 300;
const state = {
  samples: [],
  controlsAt: '',
  colors: new Map(),
  peakThreads: 0,
  peakQueueDelayMs: 0,
};

const $ = (id) => document.getElementById(id);

function colorOf(route) {
  if (!state.colors.has(route)) {
    state.colors.set(route, palette[state.colors.size % palette.length]);
  }
  return state.colors.get(route);
}

// A minimal line chart: time on x (the last keepSeconds), one line per series, optional dashed threshold.
function drawChart(canvas, series, threshold) {
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, left = 48, bottom = 18, top = 8;
  ctx.clearRect(0, 0, w, h);
  const all = series.flatMap((s) => s.points.map((p) => p.y));
  const max = Math.max(1, threshold ?? 0, ...all) * 1.1;
  const now = state.samples.length ? state.samples[state.samples.length - 1].unixTimeMs : Date.now();
  // The x axis spans what has been received, at least a minute, at most keepSeconds.
  const spanMs = Math.min(keepSeconds, Math.max(60, state.samples.length)) * 1000;
  const x = (t) => left + ((t - (now - spanMs)) / spanMs) * (w - left - 4);
  const y = (v) => top + (1 - v / max) * (h - top - bottom);

  ctx.strokeStyle = '#e5e7eb';
  ctx.fillStyle = '#5a6270';
  ctx.font = '11px system-ui, sans-serif';
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    ctx.beginPath(); ctx.moveTo(left, y(v)); ctx.lineTo(w, y(v)); ctx.stroke();
    ctx.fillText(v >= 100 ? Math.round(v).toString() : v.toFixed(1), 2, y(v) + 4);
  }
  ctx.fillText(`last ${Math.round(spanMs / 1000)} s`, left, h - 4);

  if (threshold !== undefined) {
    ctx.setLineDash([5, 4]); ctx.strokeStyle = '#dc2626';
    ctx.beginPath(); ctx.moveTo(left, y(threshold)); ctx.lineTo(w, y(threshold)); ctx.stroke();
    ctx.setLineDash([]);
  }

  for (const s of series) {
    ctx.strokeStyle = s.color; ctx.lineWidth = 2; ctx.beginPath();
    s.points.forEach((p, i) => (i === 0 ? ctx.moveTo(x(p.t), y(p.y)) : ctx.lineTo(x(p.t), y(p.y))));
    ctx.stroke(); ctx.lineWidth = 1;
  }
}

function endpointSeries(field) {
  const routes = new Set(state.samples.flatMap((s) => s.endpoints.map((e) => e.route)));
  return [...routes].map((route) => ({
    color: colorOf(route),
    points: state.samples.map((s) => ({ t: s.unixTimeMs, y: s.endpoints.find((e) => e.route === route)?.[field] ?? 0 })),
  }));
}

function render() {
  const last = state.samples[state.samples.length - 1];
  if (!last) {
    return;
  }

  $('thread-count').textContent = last.threadCount;
  $('min-workers-now').textContent = last.minWorkerThreads;
  $('queue-delay').textContent = `${last.queueDelayMs} ms`;
  $('pending').textContent = last.pendingWorkItems;
  $('injections-starvation').textContent = last.injections.starvation;
  $('injections-cooperative').textContent = last.injections.cooperativeBlocking;
  $('samples-received').textContent = state.samples.length;
  const status = $('status');
  status.dataset.state = last.starved ? 'starved' : 'healthy';
  status.textContent = last.starved
    ? `STARVED: ${last.starvation}`
    : `healthy: queue delay ${last.queueDelayMs} ms`;

  // Read by the browser test and handy in the console: the peaks since the page opened.
  document.body.dataset.samples = state.samples.length;
  document.body.dataset.peakThreads = state.peakThreads;
  document.body.dataset.peakQueueDelayMs = state.peakQueueDelayMs;

  const points = (f) => state.samples.map((s) => ({ t: s.unixTimeMs, y: f(s) }));
  drawChart($('chart-threads'), [
    { color: '#2563eb', points: points((s) => s.threadCount) },
    { color: '#9ca3af', points: points((s) => s.minWorkerThreads) },
  ]);
  drawChart($('chart-queue-delay'), [{ color: '#dc2626', points: points((s) => s.queueDelayMs) }]);
  drawChart($('chart-rps'), endpointSeries('completed'));
  drawChart($('chart-latency'), endpointSeries('latencyAvgMs'));

  $('legend').replaceChildren(...[...state.colors].map(([route, color]) => {
    const span = document.createElement('span');
    const swatch = document.createElement('i');
    swatch.style.background = color;
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
}

function onSample(event) {
  const sample = JSON.parse(event.data);
  const last = state.samples[state.samples.length - 1];
  if (last && sample.sequence <= last.sequence) {
    return;
  }
  state.samples.push(sample);
  state.peakThreads = Math.max(state.peakThreads, sample.threadCount);
  state.peakQueueDelayMs = Math.max(state.peakQueueDelayMs, sample.queueDelayMs);
  while (state.samples.length > keepSeconds) {
    state.samples.shift();
  }
  render();
}

// The app's controls answer only requests that carry this header, which a foreign page cannot send without a preflight.
const controlHeaders = { 'X-DiagnosticScenarios-Control': '1' };

// The controls live on the app itself; a page served by its own server sends them there (the app's CORS policy admits it).
async function call(method, url) {
  const response = await fetch(state.controlsAt + url, { method, headers: controlHeaders, mode: 'cors' });
  const body = await response.json().catch(() => ({}));
  return `${response.status} ${JSON.stringify(body, null, 2)}`;
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

  $('load-start').addEventListener('click', async () => {
    const query = new URLSearchParams({
      scenario: select.value,
      connections: $('load-connections').value,
      durationSeconds: $('load-duration').value,
    });
    $('load-status').textContent = await call('POST', `/api/threadpool/load?${query}`);
  });
  $('load-stop').addEventListener('click', async () => {
    $('load-status').textContent = await call('DELETE', '/api/threadpool/load');
  });
  $('minthreads-apply').addEventListener('click', async () => {
    $('minthreads-status').textContent = await call('PUT', `/api/threadpool/minthreads?workers=${encodeURIComponent($('min-workers').value)}`);
  });
  $('minthreads-reset').addEventListener('click', async () => {
    $('minthreads-status').textContent = await call('DELETE', '/api/threadpool/minthreads');
  });
}

async function start() {
  try {
    const settings = await (await fetch('/api/threadpool/page')).json();
    state.controlsAt = settings.controlsAt;
  } catch {
    $('status').textContent = 'the /api/threadpool API does not answer (ThreadPoolHealth:Enabled is false?)';
    return;
  }
  await wireControls();
  // EventSource reconnects by itself and sends Last-Event-ID, so the server replays what was missed.
  const stream = new EventSource('/api/threadpool/stream');
  stream.addEventListener('sample', onSample);
  stream.addEventListener('error', () => {
    $('status').dataset.state = 'connecting';
    $('status').textContent = 'reconnecting…';
  });
}

start();
