// The tool pane across reloads and restarts.
// - The open tool is remembered per tab (sessionStorage): a reload opens it again, and the server sends it back
//   with its latest call, so a call in flight is seen pending (with its progress) and then its result.
// - When the tool list is re-rendered (a restart, a list_changed), an open tool whose definition changed is
//   opened again: its new description and schema show, with what was typed (saved as a draft first, then kept
//   where it still fits the new schema).
// Delegated listeners only; no HTML is built here (the pane is a server-rendered partial swapped by htmx).
(function () {
  'use strict';

  var KEY = 'mcp-inspect.open-tool';

  function store(name) {
    try {
      if (name) sessionStorage.setItem(KEY, name);
      else sessionStorage.removeItem(KEY);
    } catch (err) { /* storage refused (private mode): nothing to remember */ }
  }

  function remembered() {
    try { return sessionStorage.getItem(KEY); } catch (err) { return null; }
  }

  function pane() { return document.getElementById('tool-detail'); }

  function openTool() {
    var p = pane();
    var article = p && p.querySelector(':scope > .tool-detail[data-tool]');
    return article || null;
  }

  // auto=1: the page re-opens it by itself, which is not the person looking at it (a "changed" mark stays)
  function load(name) {
    if (!window.htmx) return;
    htmx.ajax('GET', '/tool?auto=1&name=' + encodeURIComponent(name), { target: '#tool-detail', swap: 'innerHTML' });
  }

  function saveDraft(article) {
    var form = article.querySelector('form.call-form');
    if (!form) return Promise.resolve();
    var body = new URLSearchParams(new FormData(form)).toString();
    return fetch('/tool/draft?name=' + encodeURIComponent(article.getAttribute('data-tool')), {
      method: 'POST', credentials: 'same-origin', body: body,
      headers: { 'HX-Request': 'true', 'Content-Type': 'application/x-www-form-urlencoded' }
    }).catch(function () { /* the pane is re-opened with the last saved draft */ });
  }

  function refreshIfChanged() {
    var article = openTool();
    if (!article) return;
    var name = article.getAttribute('data-tool');
    fetch('/tool/version?name=' + encodeURIComponent(name), { credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (version) {
        var now = openTool();
        if (!version || !now || now.getAttribute('data-tool') !== name) return;
        if (version === now.getAttribute('data-version')) return;
        return saveDraft(now).then(function () { load(name); });
      })
      .catch(function () { /* mcp-inspect unreachable: the pane stays as it is */ });
  }

  document.addEventListener('htmx:after:settle', function (e) {
    var target = e.target;
    var p = pane();
    if (p && (target === p || p.contains(target))) {
      var article = openTool();
      if (article) store(article.getAttribute('data-tool'));
      else if (p.firstElementChild && target === p) store(null); // something else opened in the workbench
      return;
    }
    var list = document.getElementById('tools-list');
    if (list && (target === list || list.contains(target) || target.id === 'tools-list')) refreshIfChanged();
  });

  function start() {
    var p = pane();
    var name = remembered();
    if (p && name && !p.firstElementChild) load(name);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
