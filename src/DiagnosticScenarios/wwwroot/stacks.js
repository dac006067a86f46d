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

  // Where the app made the call, as the snapshot's own Describe says it: the line and its text, the callers, or the
  // compiled invoker the JIT inlined the app's code into.
  // The compiled invoker and its callers, as InlinedInvoker.ToString says it.
  const invoker = (into) => into.calledBy.length ? `${into.method}, called by ${into.calledBy.join(' or ')}` : into.method;

  function where(appFrames, inlinedInto) {
    if (!appFrames.length) {
      return inlinedInto
        ? `, in the app's code the JIT inlined into ${invoker(inlinedInto)} (a method compiled at run time; a Release build's JIT inlines small methods, so no frame of the app's is left)`
        : ', no app frame';
    }

    const [innermost, ...callers] = appFrames;
    const source = (s) => s.text === null ? `${s.fileName}:${s.line} (no source file at ${s.file}, where the PDB says it was built)` : `${s.fileName}:${s.line} \`${s.text}\``;
    const at = innermost.source ? ` at ${source(innermost.source)} in ${innermost.method}` : ` in ${innermost.method} (no line: ${innermost.noSource})`;
    const rest = callers.map((f) => ` ← ${f.method}${f.source ? ` (${f.source.fileName}:${f.source.line})` : ''}`).join('');
    const inlined = appFrames.length && inlinedInto ? ` ← called by ${invoker(inlinedInto)}, compiled at run time, where the JIT may have inlined the action` : '';
    return at + rest + inlined;
  }

  function describe(group, poolThreads) {
    const who = group.poolThreads ? `${group.threads} of ${poolThreads} pool threads` : `${group.threads} other thread${group.threads === 1 ? '' : 's'}`;
    const blocked = !group.blocking ? 'not parked in a known blocking call'
      : group.blocking.kind === 'IdleWorker' ? 'idle, waiting for work'
      : `blocked in ${group.blocking.name === group.blocking.frame ? group.blocking.name : `${group.blocking.name} (${group.blocking.frame})`}`;
    return `${who}: ${blocked}${where(group.appFrames, group.inlinedInto)}`;
  }

  function describeSite(site, poolThreads) {
    const stacks = site.groups.length === 1 ? '1 stack' : `${site.groups.length} stacks`;
    const requests = site.requestsSeen ? `; ${site.requestsSeen}` : '';
    return `${site.threads} of ${poolThreads} pool threads: blocked in ${site.blocking.name}${where(site.appFrames, site.inlinedInto)}${requests} (${stacks})`;
  }

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

  function groupDetails(group, poolThreads) {
    const details = document.createElement('details');
    details.className = group.appFrame && group.blocking?.kind !== 'IdleWorker' ? 'stack-group holder' : 'stack-group';
    const summary = document.createElement('summary');
    summary.textContent = describe(group, poolThreads);
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
    if (!capture.snapshot) {
      el('stacks-status').textContent = `The ${capture.trigger} capture at ${new Date(capture.requestedAt).toLocaleTimeString()} failed: ${capture.error}`;
      return;
    }

    const s = capture.snapshot;
    el('stacks-status').textContent = `Captured on ${capture.trigger} at ${new Date(s.capturedAt).toLocaleTimeString()}: ` +
      `${s.threadCount} managed threads, ${s.poolThreadCount} in the pool, ${s.groups.length} groups (${Math.round(s.captureMs + s.analysisMs)} ms).` +
      (s.incomplete ? ` ${s.incomplete}` : '');
    for (const site of s.blockedPoolSites.slice(0, shownSites)) {
      const details = document.createElement('details');
      details.className = 'stack-group holder';
      const summary = document.createElement('summary');
      summary.textContent = describeSite(site, s.poolThreadCount);
      const fix = document.createElement('p');
      fix.className = 'stack-fix';
      fix.textContent = site.fix ? `Fix: ${site.fix}` : '';
      details.append(summary, fix, ...site.groups.map((group) => groupDetails(group, s.poolThreadCount)));
      groups.append(details);
    }

    // With nothing parked, what the pool is doing instead: idle or running workers.
    if (s.blockedPoolSites.length === 0) {
      for (const group of s.groups.filter((g) => g.poolThreads).slice(0, shownSites)) {
        groups.append(groupDetails(group, s.poolThreadCount));
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
      const response = await fetch(state.controlsAt + '/api/threadpool/stacks', { method: 'POST', headers: controlHeaders, mode: 'cors' });
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
