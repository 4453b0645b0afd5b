// Timeline rows that change after they are shown: stderr bursts (templates/partials/_burst_row.html).
//
// A burst that grows after its row was pushed arrives again, whole, with the next rows. The new copy
// takes the old one's place (the server messages recorded in the middle of a traceback stay after it)
// and keeps it open if the user had opened it; with no old copy (cleared, trimmed) it stays where it
// landed. Same CSP rules as app.js: no HTML parsing here, server text only arrives through htmx swaps.
(function () {
  'use strict';

  var lastOf = function (row) { return parseInt(row.getAttribute('data-last') || '0', 10); };

  function mergeBursts(box) {
    var firsts = {};
    box.querySelectorAll(':scope > .row.burst').forEach(function (row) {
      var first = firsts[row.id];
      if (!first) { firsts[row.id] = row; return; }
      // Two copies of one burst: keep the one with more lines, where the first one stood.
      var keep = lastOf(row) >= lastOf(first) ? row : first;
      var drop = keep === row ? first : row;
      if (drop.open) keep.open = true;
      if (keep !== first) first.replaceWith(keep);
      else drop.remove();
      firsts[row.id] = keep;
    });
  }

  // ---- "Load older rows" only when older rows pass the filters -------------------------------
  // app.js shows #older whenever the first row is not seq 1. The server marks (#no-older, in
  // #older-slot) a sync or an older page after which nothing older passes the current filters;
  // from then on, a first row at or above that seq means there is nothing to load. Rows the page
  // dropped or the user cleared are newer than that, so the button comes back for them.
  var noneBefore = 0; // 0: unknown; -1: the first row still to come
  var firstSeq = function (box) {
    var first = box.querySelector(':scope > .row');
    return first ? parseInt(first.getAttribute('data-seq'), 10) : 0;
  };

  function keepOlderHonest(box, fromSlot) {
    var marker = document.getElementById('no-older');
    if (marker && !marker.hasAttribute('data-seen')) {
      marker.setAttribute('data-seen', '');
      // A live sync swaps #older-slot just before the rows it belongs to (live.py's note comes first): the
      // first row is the one the rows' own settle brings.
      noneBefore = fromSlot ? -1 : (firstSeq(box) || -1);
      if (fromSlot) return;
    } else if (!marker && noneBefore) {
      noneBefore = 0; // a sync that found older rows
    }
    if (noneBefore === -1 && firstSeq(box)) noneBefore = firstSeq(box);
    var older = document.getElementById('older');
    var first = firstSeq(box);
    if (older && first && noneBefore > 0 && first <= noneBefore) older.hidden = true;
  }

  // after:settle fires on each swap target, pushed <hx-partial>s included (app.js relies on the same).
  document.addEventListener('htmx:after:settle', function (e) {
    var box = document.getElementById('timeline-rows');
    if (!box) return;
    if (e.target === box) mergeBursts(box);
    if (e.target === box || e.target.id === 'older-slot') keepOlderHonest(box, e.target !== box);
  });
})();
