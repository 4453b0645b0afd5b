// Says so when mcp-inspect itself is gone, and when an action could not reach it.
//
// The live websocket closing is the first sign; it also closes for harmless reasons (a hidden tab, a reconnect),
// so the page then asks mcp-inspect directly (a HEAD of our own stylesheet, which costs it nothing). Only when that
// cannot reach it does the page say mcp-inspect has exited and disable its actions, and it keeps asking: should
// mcp-inspect answer again, the banner goes and the actions come back. A request that fails on the way
// (htmx:error: no answer at all) is said in the same banner instead of being lost in the console.
// Text reaches the banner through textContent only.
(function () {
  'use strict';

  var PROBE_FIRST_MS = 1000;   // between probes while gone, doubling up to PROBE_MAX_MS
  var PROBE_MAX_MS = 15000;
  var CONTROLS = 'button, input, select, textarea';
  var root = document.documentElement;
  var gone = false;
  var probing = false;
  var retryTimer = null;
  var retryDelay = PROBE_FIRST_MS;

  var banner = function () { return document.getElementById('connection-banner'); };

  function probeUrl() {
    var sheet = document.querySelector('link[rel=stylesheet][href]');
    return sheet ? sheet.getAttribute('href') : '/';
  }

  function say(headline, why, cls) {
    var box = banner();
    if (!box) return;
    var strong = document.createElement('span');
    strong.textContent = headline;
    var more = document.createElement('span');
    more.className = 'why';
    more.textContent = why;
    box.replaceChildren(strong, more);
    if (cls === 'failed-action') {
      var close = document.createElement('button');
      close.type = 'button';
      close.className = 'banner-close';
      close.setAttribute('aria-label', 'Dismiss');
      close.textContent = '\u2715';
      box.appendChild(close);
    }
    box.className = 'connection-banner' + (cls ? ' ' + cls : '');
    box.hidden = false;
  }

  function unsay() {
    var box = banner();
    if (box) {
      box.hidden = true;
      box.replaceChildren();
    }
  }

  // Disable every control in the page but the layout's own (they work without mcp-inspect), remembering which
  // ones we disabled so that only those come back.
  function disableActions() {
    document.querySelectorAll(CONTROLS).forEach(function (el) {
      if (el.disabled || el.closest('.layout-toggle, #pane-close, #connection-banner')) return;
      el.disabled = true;
      el.setAttribute('data-gone-disabled', '');
    });
  }

  function enableActions() {
    document.querySelectorAll('[data-gone-disabled]').forEach(function (el) {
      el.disabled = false;
      el.removeAttribute('data-gone-disabled');
    });
  }

  function markGone() {
    if (!gone) {
      gone = true;
      root.classList.add('inspector-gone');
      say('mcp-inspect has exited.',
        'This page can no longer reach it, so its actions are off. What it recorded is in the recording file. ' +
        'Start mcp-inspect again and open the address it prints.');
    }
    disableActions(); // again each time: a swap that was already on its way may have brought new controls
    retryTimer = setTimeout(probe, retryDelay);
    retryDelay = Math.min(retryDelay * 2, PROBE_MAX_MS);
  }

  function markBack() {
    retryDelay = PROBE_FIRST_MS;
    if (!gone) return;
    gone = false;
    root.classList.remove('inspector-gone');
    enableActions();
    unsay();
  }

  // Any HTTP answer from mcp-inspect means it runs; only a network failure means it is gone.
  function probe() {
    if (probing) return;
    probing = true;
    clearTimeout(retryTimer);
    fetch(probeUrl(), { method: 'HEAD', cache: 'no-store', credentials: 'same-origin' })
      .then(function (r) { probing = false; if (r.ok) markBack(); else markGone(); },
        function () { probing = false; markGone(); });
  }

  document.addEventListener('click', function (e) {
    if (e.target.closest && e.target.closest('#connection-banner .banner-close')) unsay();
  });

  document.addEventListener('htmx:ws:close', probe);
  document.addEventListener('htmx:ws:after:connection', markBack);

  // While gone, nothing is sent (it would fail anyway, one console error each).
  document.addEventListener('htmx:config:request', function (e) {
    if (gone) e.preventDefault();
  });

  // A request that got no answer at all: say which action failed, then find out whether mcp-inspect is gone.
  document.addEventListener('htmx:error', function (e) {
    var ctx = e.detail && e.detail.ctx;
    if (!ctx || !ctx.request) return; // an error inside htmx itself, not a request
    if (ctx.request.signal && ctx.request.signal.aborted) return; // superseded or cancelled on purpose
    var action = (ctx.request.method || 'GET') + ' ' + String(ctx.request.action || '').split('?')[0];
    say('An action did not reach mcp-inspect: ' + action + '.', 'Nothing was changed by it; try again.',
      'failed-action');
    probe();
  });
})();
