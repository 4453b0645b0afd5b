// The tool search: filters the tool list by name, title and description as the user types.
//
// Client-side over the rendered list: each .tool-item carries data-find (its name, title and whole description,
// lower-cased, escaped by the template). The list is re-rendered whole by a push (a restart, a list_changed), so
// the filter is applied again after every swap; the search box lives outside the list and keeps what was typed.
(function () {
  'use strict';

  var byId = function (id) { return document.getElementById(id); };

  function words(input) {
    return input.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
  }

  function apply() {
    var input = byId('tool-search');
    var list = byId('tools-list');
    if (!input || !list) return;
    var wanted = words(input);
    var tools = 0;
    var shown = 0;
    list.querySelectorAll(':scope > li').forEach(function (li) {
      var item = li.querySelector(':scope > .tool-item');
      if (!item) { // the review summary, the "no tools" note: only while not searching
        li.hidden = wanted.length > 0;
        return;
      }
      var text = item.getAttribute('data-find') || item.textContent.toLowerCase();
      var match = wanted.every(function (word) { return text.indexOf(word) >= 0; });
      li.hidden = !match;
      tools += 1;
      if (match) shown += 1;
    });
    list.filteredFor = input.value;
    var none = byId('tool-search-none');
    if (none) {
      none.hidden = !(wanted.length && tools && !shown);
      none.textContent = none.hidden ? '' : 'No tool matches \u201c' + input.value.trim() + '\u201d.';
    }
  }

  document.addEventListener('input', function (e) {
    if (e.target.id === 'tool-search') apply();
  });

  // Escape in the box empties it (and the filter with it), as in the browser's own find bar.
  document.addEventListener('keydown', function (e) {
    if (e.key !== 'Escape' || e.target.id !== 'tool-search' || !e.target.value) return;
    e.target.value = '';
    apply();
  });

  // A pushed or fetched list replaced the old one: filter it before it settles into view.
  // Every swap fires these (a flood of timeline pushes too): only a list not yet filtered for what is typed is
  // filtered, so the common case costs one property read.
  function applyToNewList() {
    var input = byId('tool-search');
    var list = byId('tools-list');
    if (input && list && list.filteredFor !== input.value) apply();
  }
  document.addEventListener('htmx:after:swap', applyToNewList);
  document.addEventListener('htmx:after:settle', applyToNewList);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', apply);
  else apply();
})();
