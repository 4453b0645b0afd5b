// The colour theme: light, dark, or the system's (prefers-color-scheme), chosen in the header's switch.
//
// Loaded in <head> without defer, so <html data-theme> is set before the body is parsed and the first paint is
// already in the right theme (no flash of light before a dark page). app.css keys its palette on data-theme.
// The choice is kept in localStorage and in a cookie: every mcp-inspect run has its own port, so its own origin
// and its own localStorage, but cookies ignore ports, so the cookie carries the choice to the next run.
(function () {
  'use strict';

  var KEY = 'mcp-inspect-theme';
  var CHOICES = ['system', 'light', 'dark'];
  var root = document.documentElement;
  var systemDark = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;

  function stored() {
    var match = document.cookie.match(/(?:^|;\s*)mcp-inspect-theme=(\w+)/);
    var value = match ? match[1] : null;
    if (!value) {
      try { value = window.localStorage.getItem(KEY); } catch (err) { value = null; } // storage refused
    }
    return CHOICES.indexOf(value) >= 0 ? value : 'system';
  }

  function remember(choice) {
    document.cookie = KEY + '=' + choice + '; path=/; max-age=31536000; SameSite=Strict';
    try { window.localStorage.setItem(KEY, choice); } catch (err) { /* the cookie still holds it */ }
  }

  function apply(choice) {
    var dark = choice === 'dark' || (choice === 'system' && !!systemDark && systemDark.matches);
    root.setAttribute('data-theme-choice', choice);
    root.setAttribute('data-theme', dark ? 'dark' : 'light');
    var select = document.getElementById('theme-choice');
    if (select) select.value = choice;
  }

  apply(stored());

  if (systemDark && systemDark.addEventListener) {
    systemDark.addEventListener('change', function () { apply(root.getAttribute('data-theme-choice')); });
  }

  document.addEventListener('change', function (e) {
    if (e.target.id !== 'theme-choice' || CHOICES.indexOf(e.target.value) < 0) return;
    remember(e.target.value);
    apply(e.target.value);
  });

  // The switch is parsed after this script ran: show it the choice once it exists.
  document.addEventListener('DOMContentLoaded', function () { apply(root.getAttribute('data-theme-choice')); });
})();
