// Display formulas wider than their column (on a phone, most of them) scroll sideways inside
// their own box (the theme makes MathJax's container of a display formula scroll). Such a box
// becomes a labelled group in the tab order, so a keyboard reader can focus it and scroll it
// with the arrow keys, and it is marked "sdl-scrolls" for the edge shadows of a11y.css that
// show more of the formula is hidden. A formula that fits is left alone.
(function () {
  "use strict";
  var LABEL = "Formula, wider than the page: scroll sideways to read all of it";
  function mark() {
    document.querySelectorAll('div.math mjx-container[display="true"]').forEach(function (box) {
      var wide = box.scrollWidth > box.clientWidth + 1;
      if (wide && !box.classList.contains("sdl-scrolls")) {
        box.classList.add("sdl-scrolls");
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "group");
        box.setAttribute("aria-label", LABEL);
      } else if (!wide && box.classList.contains("sdl-scrolls")) {
        box.classList.remove("sdl-scrolls");
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }
  var pending = null;
  function soon() {
    if (pending) clearTimeout(pending);
    pending = setTimeout(mark, 100);
  }
  function whenTypeset(tries) {
    // MathJax loads after this script on some pages: wait for its startup (10 s at most)
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(mark, mark);
    else if (mj && tries < 100) setTimeout(function () { whenTypeset(tries + 1); }, 100);
    else mark();
  }
  window.addEventListener("load", function () { whenTypeset(0); });
  window.addEventListener("resize", soon);
  // folded parts (details) change widths after the first typesetting
  document.addEventListener("toggle", soon, true);
})();
