// A call's card (templates/partials/_call.html), swapped in whole each time it changes (pushed over the websocket
// and answered to the long poll, app.js):
// - A copy the page already shows is not swapped in again. The final card comes both ways; swapping the second
//   copy replaced the card's buttons under a click (Copy as bug report lost, or landing on another button) and
//   closed what the user had opened. A card carries its version (data-version, bumped on every change of the call):
//   an incoming copy older than the card shown, or as old and not pending, is dropped from the swap. A pending
//   copy as old is still swapped: it re-arms the long poll that timed out without news.
// - Sections the user opened or closed inside a card stay that way when a newer copy comes: the state the user
//   chose is remembered per card and section, and put back as soon as the copy is in the page, in the mutation
//   observer's microtask, before the browser paints or runs anything else.
// No HTML is built here; the cards are server-rendered partials swapped by htmx.
(function () {
  'use strict';

  var CARD = '.call[id]';
  var chosen = {}; // card id -> { section key -> open }
  var hasChoices = false;

  var version = function (card) { return parseInt(card.getAttribute('data-version'), 10); };

  function stale(task) {
    var target = typeof task.target === 'string' ? document.querySelector(task.target) : task.target;
    if (!target || target.nodeType !== 1 || !target.matches('.call[id][data-version]')) return false;
    if (!task.swapSpec || task.swapSpec.style !== 'outerHTML' || !task.fragment) return false;
    var incoming = task.fragment.firstElementChild;
    if (!incoming || incoming.id !== target.id || !incoming.hasAttribute('data-version')) return false;
    var shown = version(target), coming = version(incoming);
    return coming < shown || (coming === shown && !incoming.classList.contains('state-pending'));
  }

  document.addEventListener('htmx:before:swap', function (e) {
    var tasks = e.detail && e.detail.tasks;
    if (!tasks) return;
    for (var i = tasks.length - 1; i >= 0; i--) {
      if (stale(tasks[i])) tasks.splice(i, 1);
    }
  });

  // A section is known by its class and its place among the card's sections of that class.
  function sectionKey(card, details) {
    var name = details.className || 'details';
    var same = card.querySelectorAll('details');
    var nth = 0;
    for (var i = 0; i < same.length && same[i] !== details; i++) {
      if ((same[i].className || 'details') === name) nth++;
    }
    return name + '#' + nth;
  }

  // 'toggle' does not bubble; a capturing listener on the document still sees it.
  document.addEventListener('toggle', function (e) {
    var details = e.target;
    if (!details || details.tagName !== 'DETAILS') return;
    var card = details.closest(CARD);
    if (!card) return;
    var sections = chosen[card.id] || (chosen[card.id] = {});
    hasChoices = true;
    sections[sectionKey(card, details)] = details.open;
    // The event is queued: the card may have been replaced between the click and now.
    if (!card.isConnected) {
      var live = document.getElementById(card.id);
      if (live) restore(live);
    }
  }, true);

  function restore(card) {
    var sections = chosen[card.id];
    if (!sections) return;
    card.querySelectorAll('details').forEach(function (details) {
      var open = sections[sectionKey(card, details)];
      if (open !== undefined && details.open !== open) details.open = open;
    });
  }

  function restoreWithin(node) {
    if (node.nodeType !== 1) return;
    if (node.matches(CARD)) restore(node);
    else if (node.firstElementChild && node.querySelector(CARD)) node.querySelectorAll(CARD).forEach(restore);
  }

  function start() {
    new MutationObserver(function (records) {
      if (!hasChoices) return; // the usual case, floods of timeline rows included
      for (var r = 0; r < records.length; r++) {
        var added = records[r].addedNodes;
        for (var i = 0; i < added.length; i++) restoreWithin(added[i]);
      }
    }).observe(document.body, { childList: true, subtree: true });
  }
  if (document.body) start();
  else document.addEventListener('DOMContentLoaded', start);
})();
