// Keyboard: "/" focuses the tool search; in the timeline ArrowUp/ArrowDown (Home/End) move the focus from row to
// row and Enter opens or closes the focused row (a <summary>'s own behaviour, which also loads its body); Escape
// leaves a field, or, outside fields, closes the tool pane.
//
// Closing the tool pane dispatches `inspector:close-tool-pane` on document first: the layout's collapsible pane
// can take it (preventDefault) and close itself its own way; if nobody does, the selected tool is cleared as the
// page knows it, by emptying #tool-detail (the workbench column then folds away).
(function () {
  'use strict';

  var byId = function (id) { return document.getElementById(id); };

  function isField(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function plain(e) {
    return !(e.altKey || e.ctrlKey || e.metaKey);
  }

  // ---- "/": the tool search --------------------------------------------------------------------
  document.addEventListener('keydown', function (e) {
    if (e.key !== '/' || !plain(e) || e.defaultPrevented || isField(e.target)) return;
    var search = byId('tool-search');
    if (!search || !search.getClientRects().length) return; // not on this page, or folded away
    e.preventDefault(); // the "/" is not typed into it
    search.focus();
    search.select();
  });

  // ---- the timeline: one row to the next -------------------------------------------------------
  var MOVES = { ArrowDown: 1, ArrowUp: -1, Home: -Infinity, End: Infinity };

  function rowOf(el, box) {
    var summary = el && el.closest && el.closest('summary');
    var row = summary && summary.parentElement;
    return row && row.parentElement === box && row.classList.contains('row') ? row : null;
  }

  function target(box, from, move) {
    var rows = box.querySelectorAll(':scope > .row');
    if (!rows.length) return null;
    if (move === -Infinity) return rows[0];
    if (move === Infinity || !from) return rows[move > 0 && !from ? 0 : rows.length - 1];
    var next = move > 0 ? from.nextElementSibling : from.previousElementSibling;
    while (next && !next.classList.contains('row')) next = move > 0 ? next.nextElementSibling : next.previousElementSibling;
    return next;
  }

  document.addEventListener('keydown', function (e) {
    var move = MOVES[e.key];
    if (move === undefined || !plain(e) || e.shiftKey || e.defaultPrevented) return;
    var box = byId('timeline-rows');
    if (!box) return;
    var from = rowOf(e.target, box);
    if (!from && e.target !== box) return; // the keys keep their usual meaning everywhere else
    var row = target(box, from, move);
    e.preventDefault(); // no scrolling of the list by the arrow itself
    if (!row) return;
    var summary = row.querySelector(':scope > summary');
    summary.focus({ preventScroll: true });
    summary.scrollIntoView({ block: 'nearest' });
  });

  // ---- Escape: out of a field, then the tool pane closes ---------------------------------------
  function closeToolPane() {
    var detail = byId('tool-detail');
    if (!detail || !detail.firstElementChild) return;
    var close = new CustomEvent('inspector:close-tool-pane', { bubbles: true, cancelable: true });
    if (!document.dispatchEvent(close)) return; // the layout closed it
    var tool = detail.querySelector('.tool-detail[data-tool]');
    var name = tool && tool.getAttribute('data-tool');
    detail.replaceChildren();
    // Back to the tool's entry in the list, so the keyboard is not left on <body>.
    var items = document.querySelectorAll('#tools-list .tool-item[data-tool]');
    for (var i = 0; i < items.length; i++) {
      if (items[i].getAttribute('data-tool') === name) { items[i].focus(); break; }
    }
  }

  document.addEventListener('keydown', function (e) {
    if (e.key !== 'Escape' || !plain(e) || e.defaultPrevented) return;
    if (isField(e.target)) {
      e.target.blur(); // a second Escape closes the pane
      return;
    }
    if (document.querySelector('dialog[open]')) return; // the dialog's own Escape
    closeToolPane();
  });
})();
