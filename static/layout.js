// The page's columns: show or hide the sidebar and the tool pane, drag the split between the tool pane and the
// timeline, and remember all three across reloads (localStorage, per origin: one mcp-inspect run).
//
// Loaded without `defer` from the <head>: the remembered state goes onto <html> before the first paint, so the
// page does not jump. Everything else is a delegated listener on `document`, so nothing here waits for the body.
// The CSS (static/layout.css) decides what the state means; this file only sets it and keeps the controls'
// aria-expanded / aria-valuenow saying what is actually shown.
(function () {
  'use strict';

  var KEY = 'mcp-inspect:layout';
  var PANE_MIN = 240;          // as in layout.css: the pane's column is minmax(240px, --workbench-w)
  var TIMELINE_MIN = 320;      // as in layout.css: --timeline-min
  var STEP = 16;               // one arrow key on the splitter; Shift moves four steps
  var root = document.documentElement;
  var byId = function (id) { return document.getElementById(id); };

  function load() {
    try { return JSON.parse(localStorage.getItem(KEY)) || {}; } catch (err) { return {}; }
  }
  function save(changes) {
    var state = load();
    Object.keys(changes).forEach(function (k) {
      if (changes[k] === null) delete state[k]; else state[k] = changes[k];
    });
    try { localStorage.setItem(KEY, JSON.stringify(state)); } catch (err) { /* private mode: not remembered */ }
    apply(state);
  }

  function apply(state) {
    if (state.sidebar === 'open' || state.sidebar === 'closed') root.setAttribute('data-sidebar', state.sidebar);
    else root.removeAttribute('data-sidebar');
    if (state.pane === 'closed') root.setAttribute('data-pane', 'closed');
    else root.removeAttribute('data-pane');
    // A CSSOM write, which the CSP allows (a style= attribute it would refuse).
    if (typeof state.paneWidth === 'number' && state.paneWidth > 0) {
      root.style.setProperty('--workbench-w', Math.round(state.paneWidth) + 'px');
    } else {
      root.style.removeProperty('--workbench-w');
    }
    sync();
  }

  function shown(el) { return !!el && getComputedStyle(el).display !== 'none'; }

  // The widest the pane may be: what the timeline does not need, the sidebar being where it is.
  function paneMax() {
    var layout = byId('layout');
    var sidebar = byId('sidebar');
    if (!layout) return 800;
    var side = shown(sidebar) ? sidebar.getBoundingClientRect().width : 0;
    var splitter = byId('splitter');
    var split = splitter ? splitter.getBoundingClientRect().width : 0;
    return Math.max(PANE_MIN, Math.floor(layout.clientWidth - side - split - TIMELINE_MIN));
  }

  // The controls say what is shown, whatever decided it (the user, the window's width, a tool being selected).
  function sync() {
    var sideBtn = byId('toggle-sidebar');
    if (sideBtn) sideBtn.setAttribute('aria-expanded', String(shown(byId('sidebar'))));
    var detail = byId('tool-detail');
    var selected = !!detail && detail.childElementCount > 0;
    var paneOpen = shown(byId('workbench'));
    var paneBtn = byId('toggle-pane');
    if (paneBtn) {
      paneBtn.setAttribute('aria-expanded', String(paneOpen));
      paneBtn.disabled = !selected;
      paneBtn.title = selected ? 'Show or hide the tool pane (the selected tool, resource or prompt)'
        : 'The tool pane opens when you pick a tool, resource or prompt';
    }
    var splitter = byId('splitter');
    var pane = byId('workbench');
    if (splitter && pane && paneOpen) {
      splitter.setAttribute('aria-valuemin', String(PANE_MIN));
      splitter.setAttribute('aria-valuemax', String(paneMax()));
      splitter.setAttribute('aria-valuenow', String(Math.round(pane.getBoundingClientRect().width)));
    }
  }

  function setPaneWidth(px) {
    save({ paneWidth: Math.min(paneMax(), Math.max(PANE_MIN, Math.round(px))) });
  }

  document.addEventListener('click', function (e) {
    var t = e.target.closest ? e.target : null;
    if (!t) return;
    if (t.closest('#toggle-sidebar')) {
      save({ sidebar: shown(byId('sidebar')) ? 'closed' : 'open' });
    } else if (t.closest('#toggle-pane')) {
      save({ pane: shown(byId('workbench')) ? 'closed' : null });
    } else if (t.closest('#pane-close')) {
      save({ pane: 'closed' });
      var toggle = byId('toggle-pane');
      if (toggle) toggle.focus(); // the button that was clicked is gone; keep the keyboard somewhere sensible
    } else if (t.closest('#sidebar [hx-target="#tool-detail"]')) {
      // Picking a tool, resource or prompt is asking to see it.
      if (root.getAttribute('data-pane') === 'closed') save({ pane: null });
    }
  });

  // ---- the splitter: pointer drag and keyboard -------------------------------------------------
  var drag = null;
  document.addEventListener('pointerdown', function (e) {
    var splitter = e.target.closest && e.target.closest('#splitter');
    var pane = byId('workbench');
    if (!splitter || !pane || e.button !== 0) return;
    e.preventDefault();
    // Relative to where it was grabbed, so the split does not jump by the grip's own offset.
    drag = { id: e.pointerId, x: e.clientX, width: pane.getBoundingClientRect().width, el: splitter };
    splitter.setPointerCapture(e.pointerId);
    splitter.classList.add('dragging');
    root.classList.add('resizing');
  });
  document.addEventListener('pointermove', function (e) {
    if (!drag || e.pointerId !== drag.id) return;
    // While dragging, only the CSS property moves; it is saved once, on release.
    var px = Math.min(paneMax(), Math.max(PANE_MIN, drag.width + e.clientX - drag.x));
    root.style.setProperty('--workbench-w', Math.round(px) + 'px');
    sync();
  });
  function endDrag(e) {
    if (!drag || e.pointerId !== drag.id) return;
    var pane = byId('workbench');
    drag.el.classList.remove('dragging');
    root.classList.remove('resizing');
    drag = null;
    if (pane) setPaneWidth(pane.getBoundingClientRect().width);
  }
  document.addEventListener('pointerup', endDrag);
  document.addEventListener('pointercancel', endDrag);

  document.addEventListener('keydown', function (e) {
    if (!(e.target.id === 'splitter')) return;
    var pane = byId('workbench');
    if (!pane) return;
    var now = pane.getBoundingClientRect().width;
    var step = e.shiftKey ? STEP * 4 : STEP;
    var next = { ArrowLeft: now - step, ArrowRight: now + step, Home: PANE_MIN, End: paneMax() }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    setPaneWidth(next);
  });

  // Anything that can change what is shown: the window's width, a swap into the tool pane, the page's start.
  window.addEventListener('resize', sync);
  document.addEventListener('htmx:after:settle', sync);
  document.addEventListener('DOMContentLoaded', sync);

  apply(load());
})();
