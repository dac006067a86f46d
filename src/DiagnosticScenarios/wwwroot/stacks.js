// The stack-capture panel: the latest capture of the app's own threads as blocking sites, each opening onto its exact
// stacks, and a button that takes one now.
(() => {
  const shownSites = 5;
  const pollMs = 5000;
  const el = (id) => document.getElementById(id);
  let shown = null;
  // A poll must not put "No capture yet" back over what "Capture now" answered: no poll is sent while a capture is
  // taken, and the answer of one that was sent before a capture started is dropped.
  let capturing = false;
  let capturesStarted = 0;

  const frameName = (frame) => frame.slice(frame.indexOf('!') + 1);
  const shortMethod = (frame) => frameName(frame).replace(/\(.*$/, '').split('.').slice(-2).join('.');

  // The stack as an exception shows it: the app's frames with their file and line.
  function stackText(group) {
    let next = 0;
    return group.frames.map((frame) => {
      const app = group.appFrames[next];
      if (app && shortMethod(frame) === app.method.split('.').slice(-2).join('.')) {
        next++;
        return app.source ? `${frameName(frame)} in ${app.source.file}:${app.source.line}` : frameName(frame);
      }

      return frameName(frame);
    }).join('\n');
  }

  // A group's line as the snapshot says it (GroupLines, in the order of its groups; a group is its exact stack), looked up
  // by its frames in a map made once per capture.
  function groupDetails(group, lineOf) {
    const details = document.createElement('details');
    details.className = group.appFrame && group.blocking?.kind !== 'IdleWorker' ? 'stack-group holder' : 'stack-group';
    const summary = document.createElement('summary');
    summary.textContent = lineOf.get(group.frames.join('\n'));
    const stack = document.createElement('pre');
    stack.textContent = stackText(group);
    details.append(summary, stack);
    return details;
  }

  function render(capture) {
    // The poll finds the same capture most of the time; redrawing it would fold a stack the reader has opened.
    const key = `${capture.trigger} ${capture.requestedAt}`;
    if (key === shown) {
      return;
    }

    shown = key;
    const groups = el('stacks-groups');
    groups.replaceChildren();
    // Which capture is shown, for a reader (or a test) to find it in the API's answers.
    groups.dataset.trigger = capture.trigger;
    groups.dataset.requestedAt = capture.requestedAt;
    const s = capture.snapshot;
    const lineOf = new Map(s.groups.map((g, i) => [g.frames.join('\n'), s.groupLines[i]]));
    el('stacks-status').textContent = `Captured on ${capture.trigger} at ${new Date(s.capturedAt).toLocaleTimeString()}: ` +
      `${s.threadCount} managed threads, ${s.poolThreadCount} in the pool, ${s.groups.length} groups (${Math.round(s.captureMs + s.analysisMs)} ms).` +
      (s.incomplete ? ` ${s.incomplete}` : '');
    s.blockedPoolSites.slice(0, shownSites).forEach((site, i) => {
      const details = document.createElement('details');
      details.className = 'stack-group holder';
      const summary = document.createElement('summary');
      summary.textContent = s.blockedPoolSiteLines[i];
      const fix = document.createElement('p');
      fix.className = 'stack-fix';
      fix.textContent = site.fix ? `Fix: ${site.fix}` : '';
      details.append(summary, fix, ...site.groups.map((group) => groupDetails(group, lineOf)));
      groups.append(details);
    });

    // With nothing parked, what the pool is doing instead: idle or running workers.
    if (s.blockedPoolSites.length === 0) {
      for (const group of s.groups.filter((g) => g.poolThreads).slice(0, shownSites)) {
        groups.append(groupDetails(group, lineOf));
      }
    }
  }

  // A 503 names why no capture could be taken (a process started without its diagnostic port, say).
  const failed = (status, problem) => `The capture failed (${status}): ${problem.title}${problem.detail ? ` ${problem.detail}` : ''}`;

  async function refresh() {
    if (capturing) {
      return;
    }

    const capturesBefore = capturesStarted;
    try {
      const response = await fetch('/api/threadpool/stacks', { headers: controlHeaders });
      if (capturesStarted !== capturesBefore) {
        return;
      }

      if (response.status === 404) {
        el('stacks-status').textContent = 'No capture yet: the app takes one when it declares starvation, or press "Capture now".';
      } else if (response.ok) {
        render(await response.json());
      } else if (response.status === 503) {
        el('stacks-status').textContent = failed(response.status, await response.json());
      }
    } catch {
      // A starved app answers late or not at all; the next poll catches up.
    }
  }

  el('stacks-capture').addEventListener('click', async () => {
    el('stacks-capture').disabled = true;
    el('stacks-status').textContent = 'Capturing…';
    capturing = true;
    capturesStarted += 1;
    try {
      // To the server that served the page: its own threads take the capture at once while the pool starves.
      const response = await fetch('/api/threadpool/stacks', { method: 'POST', headers: controlHeaders });
      if (response.ok) {
        render(await response.json());
      } else {
        el('stacks-status').textContent = failed(response.status, await response.json());
      }
    } catch (error) {
      el('stacks-status').textContent = `The capture did not answer: ${error}`;
    } finally {
      capturing = false;
      el('stacks-capture').disabled = false;
    }
  });

  refresh();
  setInterval(refresh, pollMs);
})();
