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

  // Modern era: a retried request (data-follows = the seq of the input_required answer it follows)
  // also gives that answer a link forward to it, whichever of the two reached the page first.
  function linkChain(row) {
    var answer = byId('r-' + row.getAttribute('data-follows'));
    var preview = answer && answer.querySelector(':scope > summary .c-preview');
    if (!preview || preview.querySelector('a.chain-next')) return;
    var a = document.createElement('a');
    a.className = 'chain-link chain-next';
    a.setAttribute('href', '#r-' + row.getAttribute('data-seq'));
    a.textContent = '\u21aa retried as #' + row.getAttribute('data-seq');
    preview.insertBefore(document.createTextNode(' '), preview.firstChild);
    preview.insertBefore(a, preview.firstChild);
  }

  function linkPairsIn(nodes) {
    nodes.forEach(function (node) {
      if (node.nodeType !== 1) return;
      if (node.matches('.row[data-pair]')) linkPair(node);
      node.querySelectorAll('.row[data-pair]').forEach(linkPair);
    });
    // Older rows load above: an answer may arrive after the retry that follows it.
    var box = rowsBox();
    if (box) box.querySelectorAll(':scope > .row[data-follows]').forEach(linkChain);
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

  // ---- live frames: acknowledged once painted -----------------------------------------------
  // The server sends the next frame only after this (inspector/web/live_flow.py), so a page that
  // renders slowly gets fewer, larger frames instead of a backlog. After the frame that paints
  // the swap: a rAF callback runs before that paint, the timeout after it.
  document.addEventListener('htmx:ws:after:message:incoming', function (e) {
    var socket = e.detail && e.detail.connection && e.detail.connection.socket;
    if (!socket) return;
    requestAnimationFrame(function () {
      setTimeout(function () {
        if (socket.readyState === WebSocket.OPEN) socket.send('{"type":"ack"}');
      }, 0);
    });
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

  // ---- only our own partials are swapped -------------------------------------------------------
  // htmx swaps whatever a request answers. A request that reaches the wrong URL (a server-given
  // name that became a path, a recording crafted to do so) must not put raw server text into the
  // page as HTML: the CSP stops scripts, not injected hx-* attributes. So an HTTP answer is swapped
  // only if it is text/html and not a download. Raw endpoints
  // (/export, /records/N.json, /records/N/command, content bytes) answer JSON, NDJSON, plain text or
  // attachments, and are refused here. Websocket pushes carry no HTTP response and are our frames.
  function refusedAnswer(ctx) {
    var response = ctx && ctx.response;
    if (!response || !response.headers || typeof response.headers.get !== 'function') return false;
    if (response.status === 204) return false; // nothing to swap (the draft saver)
    var type = (response.headers.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
    if (type !== 'text/html') return true;
    return /^\s*attachment/i.test(response.headers.get('Content-Disposition') || '');
  }

  function refuse(e) {
    var ctx = e.detail && e.detail.ctx;
    if (!refusedAnswer(ctx)) return;
    e.preventDefault();
    if (window.console) {
      console.warn('mcp-inspect: not swapping an answer that is not a partial', ctx.request && ctx.request.action);
    }
  }
  // before:response comes before the body is read and before htmx acts on response headers;
  // before:swap is the last gate before anything reaches the page.
  document.addEventListener('htmx:before:response', refuse);
  document.addEventListener('htmx:before:swap', refuse);

  // htmx:confirm only fires for elements with hx-confirm; htmx:config:request fires for every
  // request before it is sent, and cancelling it drops the request.
  document.addEventListener('htmx:config:request', function (e) {
    var elt = e.target;
    // Only a form's own submit is checked and confirmed: the JSON toggle and the draft saver inside a
    // call form post it too, and must neither be blocked nor ask.
    if (!elt.matches || !elt.matches('form')) return;
    // The JSON check comes first: no point confirming a request that will not be sent.
    if (!argumentsAreJson(elt)) {
      e.preventDefault();
      return;
    }
    if (elt.hasAttribute('data-confirm') && !window.confirm(elt.getAttribute('data-confirm'))) e.preventDefault();
  });

  // ---- generated tool forms: array rows, union branches, null choices --------------------------
  // Names follow inspector/protocol/forms/: a row template's key ends in "~new"; a new row gets the
  // same key with a fresh number wherever that key starts an attribute value.
  function renameKeys(root, templateKey, newKey) {
    var attrs = ['name', 'id', 'for', 'data-key', 'data-row-key', 'data-template-key'];
    var nodes = [root].concat(Array.prototype.slice.call(root.querySelectorAll('*')));
    nodes.forEach(function (node) {
      attrs.forEach(function (attr) {
        var value = node.getAttribute && node.getAttribute(attr);
        if (!value) return;
        var at = value.indexOf(templateKey);
        var end = at + templateKey.length;
        if (at >= 0 && (end === value.length || value.charAt(end) === '/')) {
          node.setAttribute(attr, value.slice(0, at) + newKey + value.slice(end));
        }
      });
    });
  }

  function rowCountState(fieldset) {
    var rows = fieldset.querySelectorAll(':scope > .f-rows > .f-row').length;
    var max = fieldset.getAttribute('data-max-items');
    var min = fieldset.getAttribute('data-min-items');
    var add = fieldset.querySelector(':scope > .row-add');
    if (add) add.disabled = max !== null && rows >= parseInt(max, 10);
    fieldset.querySelectorAll(':scope > .f-rows > .f-row > .row-tools > .row-remove').forEach(function (b) {
      b.disabled = min !== null && rows <= parseInt(min, 10);
    });
  }

  document.addEventListener('click', function (e) {
    var button = e.target.closest && e.target.closest('button');
    if (!button) return;
    var fieldset = button.closest('.f-array, .f-keyvalue');
    if (button.classList.contains('row-add') && fieldset) {
      var template = fieldset.querySelector(':scope > template.row-template');
      if (!template) return;
      var next = parseInt(fieldset.getAttribute('data-next') || '0', 10);
      fieldset.setAttribute('data-next', String(next + 1));
      var templateKey = template.getAttribute('data-template-key');
      var newKey = templateKey.slice(0, -'~new'.length) + next;
      var row = template.content.firstElementChild.cloneNode(true);
      renameKeys(row, templateKey, newKey);
      fieldset.querySelector(':scope > .f-rows').appendChild(row);
      if (window.htmx) htmx.process(row);
      var first = row.querySelector('input:not([type=hidden]), select, textarea');
      if (first) first.focus();
      rowCountState(fieldset);
      fieldset.dispatchEvent(new Event('change', { bubbles: true }));
      return;
    }
    var row = button.closest('.f-row');
    if (!row || !fieldset) return;
    if (button.classList.contains('row-remove')) {
      row.remove();
    } else if (button.classList.contains('row-up') && row.previousElementSibling) {
      row.parentElement.insertBefore(row, row.previousElementSibling);
    } else if (button.classList.contains('row-down') && row.nextElementSibling) {
      row.parentElement.insertBefore(row.nextElementSibling, row);
    } else {
      return;
    }
    rowCountState(fieldset);
    fieldset.dispatchEvent(new Event('change', { bubbles: true }));
  });

  document.addEventListener('change', function (e) {
    var target = e.target;
    if (!target.matches) return;
    if (target.matches('.branch-select')) {
      var union = target.closest('.f-oneof');
      union.querySelectorAll(':scope > .branch').forEach(function (branch) {
        branch.hidden = branch.getAttribute('data-branch') !== target.value;
      });
    } else if (target.matches('.null-toggle')) {
      var holder = target.closest('.f-field, .f-object, .f-array, .f-keyvalue, .f-oneof, .f-json');
      if (holder) holder.classList.toggle('is-null', target.checked);
    }
  });

  document.addEventListener('htmx:after:settle', function () {
    document.querySelectorAll('.f-array, .f-keyvalue').forEach(rowCountState);
    pollPendingCalls();
  });

  // ---- pending tool calls --------------------------------------------------------------------
  // A call's answer is pushed over the websocket, but the push can arrive before the pending call
  // is in the page. So each pending call is also long-polled once it is in the page (the server
  // answers when the call is done, or with a fresh pending element to poll again).
  function pollPendingCalls() {
    if (!window.htmx) return;
    document.querySelectorAll('.call[data-poll]:not([data-polling])').forEach(function (call) {
      call.setAttribute('data-polling', '1');
      htmx.ajax('GET', call.getAttribute('data-poll'), { target: '#' + call.id, swap: 'outerHTML' });
    });
  }
  document.addEventListener('DOMContentLoaded', pollPendingCalls);

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
