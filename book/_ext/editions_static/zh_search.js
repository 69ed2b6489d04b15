// Chinese search (book/_ext/editions.py loads this on the Chinese edition's pages, before Sphinx's
// searchtools.js). Sphinx indexes Chinese text as jieba's words but splits a query only at spaces and
// punctuation, so "拒绝次数" would be one term that no page holds. Here each run of Chinese characters
// in a query is cut into the longest terms of the book's own index, left to right (the index's words,
// the words the reader is likely to type); a character no indexed word starts with stays as it is.
"use strict";

var splitQuery = (query) => {
  const terms = (typeof Search !== "undefined" && Search._index && Search._index.terms) || {};
  const longest = 8;
  const out = [];
  for (const part of query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)) {
    if (!part) continue;
    if (!/\p{Script=Han}/u.test(part)) {
      out.push(part);
      continue;
    }
    let i = 0;
    while (i < part.length) {
      let n = Math.min(longest, part.length - i);
      while (n > 1 && !(part.slice(i, i + n).toLowerCase() in terms)) n -= 1;
      out.push(part.slice(i, i + n));
      i += n;
    }
  }
  return out;
};
