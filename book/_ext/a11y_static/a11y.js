// Display formulas wider than their column (on a phone, most of them) scroll sideways inside
// their own box (the theme makes MathJax's container of a display formula scroll). Such a box
// becomes a labelled group in the tab order, so a keyboard reader can focus it and scroll it
// with the arrow keys (the label in the page's language), and it is marked "sdl-scrolls" for the edge fades of a11y.css that
// show more of the formula is hidden. A formula that fits is left alone. An inline formula wider
// than its line (MathJax does not break inline math) gets the same box ("sdl-scrolls-inline"),
// and so does a table that scrolls in the theme's box: each such box is marked "sdl-more-left" /
// "sdl-more-right" while part of it is hidden on that side.
(function () {
  "use strict";
  // the box's label in the page's language (<html lang>: English, or Chinese on the Chinese edition)
  var LABELS = {
    en: "Formula, wider than the page: scroll sideways to read all of it",
    zh: "公式比页面宽：左右滚动可读完整个公式",
  };
  var LABEL = (document.documentElement.getAttribute("lang") || "").toLowerCase().indexOf("zh") === 0
    ? LABELS.zh : LABELS.en;
  function setWide(box, wide, cls) {
    if (wide && !box.classList.contains(cls)) {
      box.classList.add(cls);
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "group");
      box.setAttribute("aria-label", LABEL);
    } else if (!wide && box.classList.contains(cls)) {
      box.classList.remove(cls);
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  }
  // which sides of a scrolling box hide part of it
  function edges(box) {
    var more = box.scrollWidth - box.clientWidth;
    box.classList.toggle("sdl-more-left", more > 1 && box.scrollLeft > 1);
    box.classList.toggle("sdl-more-right", more > 1 && box.scrollLeft < more - 1);
  }
  // an inline formula at most this much too small to fit its line is set smaller rather than scrolled
  var SMALLEST = 0.85;
  function base(box) {  // MathJax's own size of the formula, in per cent (its inline style)
    return parseFloat(box.dataset.sdFontSize) || 100;
  }
  function size(box) {
    return parseFloat(box.style.fontSize) || base(box);
  }
  function scale(box, factor) {
    box.style.fontSize = (size(box) * factor).toFixed(1) + "%";
  }
  var SCROLLERS = "mjx-container.sdl-scrolls, mjx-container.sdl-scrolls-inline, " +
    ".pst-scrollable-table-container, .cell_output > .output:has(> table), .sd-output-table";
  function mark() {
    document.querySelectorAll('div.math mjx-container[display="true"]').forEach(function (box) {
      setWide(box, box.scrollWidth > box.clientWidth + 1, "sdl-scrolls");
    });
    document.querySelectorAll('.bd-article mjx-container:not([display="true"])').forEach(function (box) {
      // measured afresh at MathJax's own size (its inline style), not at one set below for a formula with its
      // punctuation
      if (box.dataset.sdFontSize === undefined) box.dataset.sdFontSize = box.style.fontSize;
      box.style.fontSize = box.dataset.sdFontSize;
      box.style.maxWidth = "";
      var math = box.querySelector("mjx-math");
      var line = box.parentElement && box.parentElement.closest("p, li, dd, dt, td, th, figcaption, caption, div");
      if (!math || !line) return;
      var cs = getComputedStyle(line);
      var room = line.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      var width = math.getBoundingClientRect().width;
      if (width > room + 1 && (room - 2) / width >= SMALLEST) {  // a little too wide: set smaller, not scrolled
        scale(box, (room - 2) / width);
        width = math.getBoundingClientRect().width;
      }
      setWide(box, width > room + 1, "sdl-scrolls-inline");
    });
    // a formula kept on one line with its punctuation (reader_pages.css's sd-math-punct) where the two together
    // are wider than the line: the punctuation never goes to the next line alone. A formula at most 15 % too
    // wide is set that much smaller; a wider one scrolls in a box that leaves the punctuation its room.
    document.querySelectorAll(".bd-article .sd-math-punct").forEach(function (group) {
      var line = group.parentElement && group.parentElement.closest("p, li, dd, dt, td, th, figcaption, caption, div");
      var box = group.querySelector("mjx-container");
      if (!line || !box) return;
      var cs = getComputedStyle(line);
      var room = line.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      var width = group.getBoundingClientRect().width;
      if (width <= room + 1) return;
      var math = box.querySelector("mjx-math") || box;
      var mathWidth = math.getBoundingClientRect().width;
      var fits = room - (width - box.getBoundingClientRect().width) - 2;  // the room the punctuation leaves
      if (mathWidth > 0 && size(box) / base(box) * fits / mathWidth >= SMALLEST) {
        scale(box, fits / mathWidth);
        setWide(box, false, "sdl-scrolls-inline");
      } else {
        setWide(box, true, "sdl-scrolls-inline");
        box.style.maxWidth = Math.max(fits, 0) + "px";
      }
    });
    document.querySelectorAll(SCROLLERS).forEach(edges);
  }
  document.addEventListener("scroll", function (e) {
    var box = e.target;
    if (box && box.matches && box.matches(SCROLLERS)) edges(box);
  }, true);
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
