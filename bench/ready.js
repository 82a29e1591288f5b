// When the page is ready: connected, and the new game dialog open or a board dealt; noted as
// window.__ready (performance.now(), from the navigation's start). Used by bench/pageload.py
// and tests/browser/test_assets.py.
(() => {
  const ready = () => document.querySelector('#conn[data-state="online"]') &&
    (document.querySelector('#dlg-new[open]') || document.querySelector('#board[data-seq]'));
  const look = () => {
    if (window.__ready === undefined && ready()) window.__ready = performance.now();
  };
  new MutationObserver(look).observe(document, { subtree: true, childList: true, attributes: true });
})();
