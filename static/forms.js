// Generated forms: the "include" choice of an optional array, object or key/value map follows what the person did.
// Adding a row, typing or choosing inside it ticks "include" (what they entered is what will be sent); removing
// its last row unticks it. Delegated listeners only (app.js adds and removes the rows and fires "change").
(function () {
  'use strict';

  var CONTAINERS = '.f-array, .f-keyvalue, .f-object, .f-oneof';

  function includeOf(container) {
    var legend = container.querySelector(':scope > legend');
    return legend && legend.querySelector(':scope > .include-choice > input[type=checkbox]');
  }

  function rowsLeft(container) {
    return container.querySelectorAll(':scope > .f-rows > .f-row').length;
  }

  function hasValue(field) {
    if (field.tagName === 'SELECT') return Array.prototype.some.call(field.options, function (o) {
      return o.selected && o.value !== '';
    });
    return field.value !== '';
  }

  function follow(target) {
    if (!target.closest || target.closest('.include-choice, .null-choice')) return; // the person's own choice
    var field = target.closest('.f-field');
    var own = field && field.querySelector(':scope > .f-line > .include-choice > input[type=checkbox]');
    if (own && target.matches('input, select, textarea')) own.checked = hasValue(target); // a multi-select
    var box = target.closest(CONTAINERS);
    if (box && target === box && box.matches('.f-array, .f-keyvalue') && rowsLeft(box) === 0) {
      var emptied = includeOf(box);
      if (emptied) emptied.checked = false; // its last row removed: nothing to send
      return;
    }
    for (; box; box = box.parentElement && box.parentElement.closest(CONTAINERS)) {
      var include = includeOf(box);
      if (include) include.checked = true;
    }
  }

  document.addEventListener('input', function (e) { follow(e.target); });
  document.addEventListener('change', function (e) { follow(e.target); });
})();
