// Sections the user opened or closed inside a call's card stay that way when the card is rendered again.
//
// A call's card is swapped in whole each time it changes, and its final form can arrive twice (pushed over
// the websocket and answered to the long poll, app.js). Each copy comes with its <details> in their
// default state, so a stderr block the user had just opened would close under the pointer. The state the
// user chose is remembered per card and section, and put back as soon as a new copy is in the page: in
// the mutation observer's microtask, before the browser paints or runs anything else.
// No HTML is built here; the cards are server-rendered partials swapped by htmx.
(function () {
  'use strict';

  var CARD = '.call[id]';
  var chosen = {}; // card id -> { section key -> open }
  var hasChoices = false;

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
