// The server's questions in sight: the banner pinned at the top of the page and the "Answer" button of a
// pending call's card bring the ask's form into view and put the cursor in it, wherever the sidebar is scrolled.
// Delegated listeners only; no HTML is built here (the banner and the cards are server-rendered partials).
(function () {
  'use strict';

  function askArticle(key) {
    var panel = document.getElementById('asks-panel');
    if (!panel) return null;
    var found = null;
    panel.querySelectorAll('.ask[data-ask]').forEach(function (el) {
      if (!found && el.getAttribute('data-ask') === key) found = el;
    });
    return found || panel.querySelector('.ask[data-ask]');
  }

  document.addEventListener('click', function (e) {
    var button = e.target.closest && e.target.closest('[data-ask-jump]');
    if (!button) return;
    e.preventDefault();
    var article = askArticle(button.getAttribute('data-ask-jump'));
    if (!article) return;
    // A collapsed sidebar would hide the form: the layout listens for this and opens it.
    article.dispatchEvent(new CustomEvent('mcp:reveal', { bubbles: true }));
    article.scrollIntoView({ block: 'start' });
    article.classList.add('ask-focus');
    var field = article.querySelector('textarea, input:not([type=hidden]), select, button');
    if (field) field.focus({ preventScroll: true });
  });

  // The highlight lasts until the person acts on the ask (or another one is brought up).
  document.addEventListener('focusout', function (e) {
    var article = e.target.closest && e.target.closest('.ask.ask-focus');
    if (article && !article.contains(e.relatedTarget)) article.classList.remove('ask-focus');
  });
})();
