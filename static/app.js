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
  // up or opened a row; ends by itself when the user scrolls back to the bottom). While not
  // following, a pill counts the rows that came in below and jumps back to the newest.
  // Layout is read once per animation frame and written after (frame() below): a flood swaps
  // rows many times a second, and each read after a swap would force a layout of its own.
  var pausedByButton = false;
  var pausedByReading = false;
  var unseen = 0;             // rows that came in while not following
  var paused = function () { return pausedByButton || pausedByReading; };

  // The element that scrolls: #timeline-rows or an ancestor with overflow, else the page. Looked
  // up once (reading computed style forces a style pass), again after a resize or a re-render.
  var scrollEl = null;
  function scroller() {
    if (scrollEl && scrollEl.isConnected) return scrollEl;
    scrollEl = null;
    for (var el = rowsBox(); el && el !== document.body; el = el.parentElement) {
      var oy = getComputedStyle(el).overflowY;
      if (oy === 'auto' || oy === 'scroll') { scrollEl = el; break; }
    }
    return scrollEl || document.scrollingElement || document.documentElement;
  }
  window.addEventListener('resize', function () { scrollEl = null; });

  function atBottom(el) {
    return el.scrollHeight - el.scrollTop - el.clientHeight <= AT_BOTTOM_PX;
  }

  function pill() {
    var box = rowsBox();
    var existing = byId('new-rows');
    if (existing || !box) return existing;
    var button = document.createElement('button');
    button.type = 'button';
    button.id = 'new-rows';
    button.className = 'new-rows';
    button.hidden = true;
    box.after(button);
    return button;
  }

  function showPauseState() {
    var btn = byId('pause-scroll');
    if (btn) {
      btn.setAttribute('aria-pressed', String(paused()));
      btn.textContent = paused() ? 'Resume scroll' : 'Pause scroll';
      btn.title = paused() ? 'Paused: new rows are not followed' : 'Stop following new rows';
    }
    var badge = pill();
    if (!badge) return;
    badge.hidden = !(paused() && unseen > 0);
    badge.textContent = unseen.toLocaleString('en') + (unseen === 1 ? ' new row' : ' new rows') + ' \u2193';
  }

  function setReading(reading) {
    if (reading === pausedByReading) return;
    pausedByReading = reading;
    if (!paused()) unseen = 0;
    showPauseState();
  }

  function resume() {
    pausedByButton = pausedByReading = false;
    unseen = 0;
    showPauseState();
    follow();
  }

  var frameAsked = false;
  var followWanted = false;   // rows were swapped in since the last frame
  var scrollSeen = false;     // a scroll event since the last frame
  var lastTop = 0;            // the scroller's scrollTop after the last frame
  var userAt = -Infinity;     // when the user last wheeled, touched, pressed a key or a pointer
  var USER_MS = 500;          // a scroll this soon after such input is the user's

  function inFrame() {
    if (frameAsked) return;
    frameAsked = true;
    requestAnimationFrame(frame);
  }

  function frame() {
    frameAsked = false;
    if (!rowsBox()) return;
    var el = scroller();
    // Read: did the user scroll away from the bottom, or back to it? A swap can move the scroll
    // position too (rows trimmed, the timeline replaced); only the user's own scroll up, or one
    // with nothing new to follow, means reading.
    if (scrollSeen) {
      scrollSeen = false;
      var up = el.scrollTop < lastTop;
      if (atBottom(el)) setReading(false);
      else if (performance.now() - userAt < USER_MS && (up || !followWanted)) setReading(true);
    }
    // Write: follow the newest row.
    if (followWanted && !paused()) el.scrollTop = el.scrollHeight;
    followWanted = false;
    lastTop = el.scrollTop;
  }

  function follow() {
    followWanted = true;
    inFrame();
  }

  // The user's own scrolling: a wheel, touch or pointer (its scrollbar) on the timeline, or a
  // scrolling key outside a field. A click elsewhere (Call) moves no scroll position of theirs.
  var SCROLL_KEYS = /^(PageUp|PageDown|Home|End|ArrowUp|ArrowDown| )$/;
  function userInput(e) {
    var target = e.target;
    if (e.type === 'keydown') {
      if (!SCROLL_KEYS.test(e.key) || (target.closest && target.closest('input, textarea, select'))) return;
    } else if (!(target.nodeType === 1 && scroller().contains(target))) {
      return;
    }
    userAt = performance.now();
  }
  ['wheel', 'touchmove', 'keydown', 'pointerdown'].forEach(function (type) {
    document.addEventListener(type, userInput, { capture: true, passive: true });
  });

  // Scroll events do not bubble; capture sees the inner scroller's and the page's alike.
  document.addEventListener('scroll', function (e) {
    var source = e.target === document ? document.scrollingElement : e.target;
    if (source !== scroller()) return;
    scrollSeen = true;
    inFrame();
  }, true);

  // Opening a row to read it must not be yanked away by the next live row.
  document.addEventListener('toggle', function (e) {
    var row = e.target;
    var box = rowsBox();
    if (row.open && box && row.parentElement === box) setReading(true);
  }, true);

  document.addEventListener('click', function (e) {
    if (!e.target.closest) return;
    if (e.target.closest('#new-rows')) {
      resume();
    } else if (e.target.closest('#pause-scroll')) {
      if (paused()) {
        resume();
      } else {
        pausedByButton = true;
        showPauseState();
      }
    }
  });

  // Rows that came in while not following: appended rows, or a replaced timeline's rows newer
  // than the newest shown before plus those the server says it skipped (its .rows-skipped note).
  var newestSeen = 0;
  function countNew(style, nodes) {
    var fresh = 0;
    var newest = newestSeen;
    nodes.forEach(function (node) {
      if (node.nodeType !== 1 || !node.classList.contains('row')) return;
      var seq = seqOf(node);
      if (style === 'beforeend' || seq > newestSeen) fresh++;
      if (seq > newest) newest = seq;
    });
    if (style === 'innerHTML') {
      var note = document.querySelector('#older-slot .rows-skipped[data-skipped]');
      if (note && newest > newestSeen) fresh += parseInt(note.getAttribute('data-skipped'), 10) || 0;
    }
    newestSeen = newest;
    if (paused() && fresh) {
      unseen += fresh;
      showPauseState();
    }
  }

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
    var box = rowsBox();
    if (!box || box.childElementCount <= limit) return; // the usual case, without a query
    var rows = rowsOf(box);
    for (var i = 0; i < rows.length - limit; i++) rows[i].remove();
  }

  function dropCleared() {
    if (!clearedUpTo) return;
    rowsOf(rowsBox()).forEach(function (row) {
      if (seqOf(row) <= clearedUpTo) row.remove();
    });
  }

  function syncOlder() {
    var box = rowsBox();
    var first = box && box.querySelector(':scope > .row');
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
      countNew(style, d.newContent || []);
      dropCleared();
      trim(paused() ? MAX_ROWS_READING : MAX_ROWS);
    }
    syncOlder(); // before following: showing #older can change the scroller's height
    follow(); // in the next animation frame, once for all the swaps before it
  });

  // ---- live frames: acknowledged once painted -----------------------------------------------
  // The server sends the next frame only after this (inspector/web/live_flow.py), so a page that
  // renders slowly gets fewer, larger frames instead of a backlog. After the frame that paints
  // the swap: a rAF callback runs before that paint, the timeout after it. Every frame is
  // acknowledged, once: one whose swap threw (hx-ws then fires htmx:ws:error, not after:message),
  // and one after which no animation frame comes (a tab that is not painting) after ACK_LATEST_MS.
  // A lost acknowledgement would hold back every live row until the server gives up on the tab.
  var ACK_LATEST_MS = 2000;
  function acknowledge(socket) {
    var done = false;
    var ack = function () {
      if (done) return;
      done = true;
      if (socket.readyState === WebSocket.OPEN) socket.send('{"type":"ack"}');
    };
    requestAnimationFrame(function () { setTimeout(ack, 0); });
    setTimeout(ack, ACK_LATEST_MS);
  }
  var socketOf = function (e) { return e.detail && e.detail.connection && e.detail.connection.socket; };
  document.addEventListener('htmx:ws:after:message:incoming', function (e) {
    if (socketOf(e)) acknowledge(socketOf(e));
  });
  document.addEventListener('htmx:ws:error', function (e) {
    // A frame that failed to swap (the socket's own failures come as an Event, not an Error).
    if (socketOf(e) && e.detail.error instanceof Error) acknowledge(socketOf(e));
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

  // A pending call's card is re-rendered with each progress step (pushed and long-polled), so its
  // Cancel button can be replaced between the press and the release: the browser then sends the
  // click to neither button and the cancel is lost. A press on Cancel is remembered; if its button
  // is gone by the release, the cancel is sent from here.
  var cancelPressed = null;
  document.addEventListener('pointerdown', function (e) {
    var btn = e.target.closest && e.target.closest('.cancel-call');
    cancelPressed = btn && btn.getAttribute('hx-post') ? btn : null;
  }, true);
  document.addEventListener('pointerup', function () {
    var btn = cancelPressed;
    cancelPressed = null;
    if (!btn || btn.isConnected || !window.htmx) return;
    var url = btn.getAttribute('hx-post');
    var card = /^\/calls\/(\d+)\/cancel$/.exec(url || '');
    var target = card && byId('call-' + card[1]);
    if (target && target.classList.contains('state-pending')) {
      htmx.ajax('POST', url, { target: '#' + target.id, swap: 'outerHTML' });
    }
  }, true);

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
