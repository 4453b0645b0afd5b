// mcp-inspect page glue.
//
// Runs under a strict CSP (no inline code, no eval), so everything htmx cannot express without
// `hx-on`/`js:` lives here. This file never parses HTML: server text only reaches the DOM through
// htmx swaps of server-escaped partials, or through textContent below.
// Every listener is delegated from `document` and every lookup is lazy, so the script may load
// anywhere in the page and does nothing (rather than throw) where an element is absent.
(function () {
  'use strict';

  var MAX_ROWS = 1000;        // rows kept in the DOM while following the live tail
  var MAX_ROWS_READING = 5000; // hard cap while the user reads (paused): trimming then would pull
                               // rows, older ones just loaded included, out from under them
  var AT_BOTTOM_PX = 40;      // this close to the bottom still counts as "at the bottom"

  var byId = function (id) { return document.getElementById(id); };
  var rowsBox = function () { return byId('timeline-rows'); };
  var rowsOf = function (box) { return box ? box.querySelectorAll(':scope > .row') : []; };
  var seqOf = function (row) { return parseInt(row.getAttribute('data-seq'), 10); };

  // ---- auto-scroll ---------------------------------------------------------------------------
  // Two reasons to stop following: the button (stays until pressed again) and reading (scrolled
  // up or opened a row; ends by itself when the user scrolls back to the bottom).
  var pausedByButton = false;
  var pausedByReading = false;
  var paused = function () { return pausedByButton || pausedByReading; };

  // The element that scrolls: #timeline-rows or an ancestor with overflow, else the page.
  function scroller() {
    for (var el = rowsBox(); el && el !== document.body; el = el.parentElement) {
      var oy = getComputedStyle(el).overflowY;
      if (oy === 'auto' || oy === 'scroll') return el;
    }
    return document.scrollingElement || document.documentElement;
  }

  function atBottom(el) {
    return el.scrollHeight - el.scrollTop - el.clientHeight <= AT_BOTTOM_PX;
  }

  function showPauseState() {
    var btn = byId('pause-scroll');
    if (btn) btn.setAttribute('aria-pressed', String(paused()));
  }

  function follow() {
    if (paused() || !rowsBox()) return;
    var el = scroller();
    el.scrollTop = el.scrollHeight;
  }

  // Scroll events do not bubble; capture sees the inner scroller's and the page's alike.
  document.addEventListener('scroll', function (e) {
    var el = scroller();
    var source = e.target === document ? document.scrollingElement : e.target;
    if (source !== el) return;
    var reading = !atBottom(el);
    if (reading !== pausedByReading) {
      pausedByReading = reading;
      showPauseState();
    }
  }, true);

  // Opening a row to read it must not be yanked away by the next live row.
  document.addEventListener('toggle', function (e) {
    var row = e.target;
    var box = rowsBox();
    if (row.open && box && row.parentElement === box) {
      pausedByReading = true;
      showPauseState();
    }
  }, true);

  document.addEventListener('click', function (e) {
    var btn = e.target.closest && e.target.closest('#pause-scroll');
    if (!btn) return;
    if (paused()) {
      pausedByButton = pausedByReading = false;
      showPauseState();
      follow();
    } else {
      pausedByButton = true;
      showPauseState();
    }
  });

  // ---- keeping the DOM small, and #older in step ---------------------------------------------
  var clearedUpTo = 0; // rows up to this seq were cleared by the user; keep them out on resync

  function setOlder(beforeSeq) {
    var older = byId('older');
    var input = older && older.querySelector('input[name=before]');
    if (!input) return;
    input.value = String(beforeSeq);
    // seq 1 is the first record of a session: nothing older exists to load.
    older.hidden = beforeSeq <= 1;
  }

  function trim(limit) {
    var rows = rowsOf(rowsBox());
    for (var i = 0; i < rows.length - limit; i++) rows[i].remove();
  }

  function dropCleared() {
    if (!clearedUpTo) return;
    rowsOf(rowsBox()).forEach(function (row) {
      if (seqOf(row) <= clearedUpTo) row.remove();
    });
  }

  function syncOlder() {
    var first = rowsOf(rowsBox())[0];
    if (first) setOlder(seqOf(first));
  }

  document.addEventListener('click', function (e) {
    if (!(e.target.closest && e.target.closest('#clear-view'))) return;
    var box = rowsBox();
    if (!box) return;
    var rows = rowsOf(box);
    if (rows.length) {
      clearedUpTo = Math.max(clearedUpTo, seqOf(rows[rows.length - 1]));
      setOlder(clearedUpTo + 1); // "load older" brings the cleared rows back on request
    }
    box.replaceChildren();
  });

  // ---- request/response pair links -----------------------------------------------------------
  // Same arrows as the row template: up to the request, down to the response.
  function setPairLink(row, otherSeq) {
    var a = row.querySelector(':scope > summary a.pair-link');
    if (!a) return;
    a.setAttribute('href', '#r-' + otherSeq);
    a.textContent = (Number(otherSeq) < seqOf(row) ? '\u2191 #' : '\u2193 #') + otherSeq;
  }

  // The request row is rendered before its response exists; when the response arrives carrying
  // data-pair, point the request back at it too.
  function linkPair(row) {
    var other = row.getAttribute('data-pair');
    if (!other) return;
    setPairLink(row, other);
    var partner = byId('r-' + other);
    if (partner && !partner.getAttribute('data-pair')) {
      partner.setAttribute('data-pair', row.getAttribute('data-seq'));
      setPairLink(partner, row.getAttribute('data-seq'));
    }
  }

  function linkPairsIn(nodes) {
    nodes.forEach(function (node) {
      if (node.nodeType !== 1) return;
      if (node.matches('.row[data-pair]')) linkPair(node);
      node.querySelectorAll('.row[data-pair]').forEach(linkPair);
    });
  }

  // htmx fires after:settle on each swap target (pushed <hx-partial>s included), carrying the
  // swap style, which tells live rows (appended, or a full replace) from older ones (afterbegin).
  document.addEventListener('htmx:after:settle', function (e) {
    var box = rowsBox();
    var target = e.target;
    if (!box || !(target === box || box.contains(target))) return;
    var d = e.detail || {};
    linkPairsIn(d.newContent || [target]);
    if (target !== box) return; // a single row was updated in place
    var style = d.task && d.task.swapSpec ? d.task.swapSpec.style : '';
    if (style === 'afterbegin') {
      if (!(d.newContent || []).some(function (n) { return n.nodeType === 1; })) {
        var older = byId('older');
        if (older) older.hidden = true; // asked for older rows, none left
      }
    } else {
      dropCleared();
      trim(paused() ? MAX_ROWS_READING : MAX_ROWS);
    }
    syncOlder(); // before following: showing #older can change the scroller's height
    follow();
  });

  // ---- filters: re-sync after every (re)connect ----------------------------------------------
  // hx-ws closes the socket whenever the tab is hidden and reopens it when shown, and the server
  // then resends the unfiltered newest rows; the filters have to be sent again.
  function isDefault(field) {
    if (field.type === 'checkbox' || field.type === 'radio') return field.checked === field.defaultChecked;
    if (field.tagName === 'SELECT') {
      var opts = Array.prototype.slice.call(field.options);
      var def = opts.findIndex(function (o) { return o.defaultSelected; });
      return field.selectedIndex === (def < 0 ? 0 : def);
    }
    if ('defaultValue' in field && field.type !== 'hidden') return field.value === field.defaultValue;
    return true;
  }

  document.addEventListener('htmx:ws:after:connection', function () {
    var form = byId('filters');
    if (!form || Array.prototype.every.call(form.elements, isDefault)) return;
    // Fire the first event the form's hx-ws:send listens for (its hx-trigger, or submit), so the
    // extension sends the form as JSON exactly as on user input. A synthetic (untrusted) submit
    // event never navigates.
    var trigger = (form.getAttribute('hx-trigger') || 'submit').split(',')[0].trim().split(/\s+/)[0];
    form.dispatchEvent(new Event(trigger || 'submit', { bubbles: true, cancelable: true }));
  });

  // hx-ws:send serialises only the fields; tag the message so the server knows what it is.
  document.addEventListener('htmx:ws:before:message:outgoing', function (e) {
    var values = e.detail && e.detail.message && e.detail.message.values;
    if (values && e.target.id === 'filters' && values.type === undefined) values.type = 'filters';
  });

  // ---- checks before a request leaves --------------------------------------------------------
  function showJsonError(textarea, message) {
    var slot = textarea.parentElement && textarea.parentElement.querySelector('.json-error');
    if (!slot && message) {
      slot = document.createElement('div');
      slot.className = 'json-error';
      slot.setAttribute('role', 'alert');
      textarea.after(slot);
    }
    if (slot) {
      slot.textContent = message;
      slot.hidden = !message;
    }
    if (message) textarea.setAttribute('aria-invalid', 'true');
    else textarea.removeAttribute('aria-invalid');
  }

  function argumentsAreJson(form) {
    var textarea = form && form.querySelector('textarea[name=arguments]');
    if (!textarea) return true;
    try {
      JSON.parse(textarea.value);
      showJsonError(textarea, '');
      return true;
    } catch (err) {
      showJsonError(textarea, 'Arguments are not valid JSON: ' + err.message);
      textarea.focus();
      return false;
    }
  }

  document.addEventListener('input', function (e) {
    if (e.target.matches && e.target.matches('textarea[name=arguments][aria-invalid]')) {
      showJsonError(e.target, '');
    }
  });

  // htmx:confirm only fires for elements with hx-confirm; htmx:config:request fires for every
  // request before it is sent, and cancelling it drops the request.
  document.addEventListener('htmx:config:request', function (e) {
    var elt = e.target;
    if (!elt.closest) return;
    var ctx = e.detail && e.detail.ctx;
    var form = elt.closest('form') || (ctx && ctx.request && ctx.request.form);
    // The JSON check comes first: no point confirming a request that will not be sent.
    if (!argumentsAreJson(form)) {
      e.preventDefault();
      return;
    }
    var asker = elt.closest('[data-confirm]') || (form && form.closest('[data-confirm]'));
    if (asker && !window.confirm(asker.getAttribute('data-confirm'))) e.preventDefault();
  });

  // ---- copy JSON -----------------------------------------------------------------------------
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return legacyCopy(text); });
    }
    return legacyCopy(text);
  }

  // For browsers or contexts without the async clipboard API (or where it is refused).
  function legacyCopy(text) {
    var ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.className = 'offscreen';
    document.body.appendChild(ta);
    ta.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } finally { ta.remove(); }
    return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
  }

  function flash(btn, text) {
    if (btn.dataset.label === undefined) btn.dataset.label = btn.textContent;
    btn.textContent = text;
    clearTimeout(btn._flashTimer);
    btn._flashTimer = setTimeout(function () {
      btn.textContent = btn.dataset.label;
      delete btn.dataset.label;
    }, 1500);
  }

  document.addEventListener('click', function (e) {
    var btn = e.target.closest && e.target.closest('button.copy-json[data-url]');
    if (!btn) return;
    e.preventDefault(); // inside a <summary> a click would also toggle the row
    var url;
    try { url = new URL(btn.getAttribute('data-url'), location.href); } catch (err) { return; }
    if (url.origin !== location.origin) return; // never send the cookie elsewhere
    fetch(url.href, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        return r.text();
      })
      .then(copyText)
      .then(function () { flash(btn, 'Copied'); }, function () { flash(btn, 'Copy failed'); });
  });

  // ---- start ---------------------------------------------------------------------------------
  function start() {
    showPauseState();
    syncOlder();
    linkPairsIn([rowsBox()].filter(Boolean));
    follow();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
