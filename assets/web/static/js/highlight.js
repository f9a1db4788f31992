// The words of a search marked where they occur inside an element (the replay opened from a
// search result): text nodes are split around each match and the match wrapped in <mark>, so
// the markup around stays as it was and nothing is parsed from the text.

const MAX_MARKS = 200;

// The words a query looks for, as the server's search reads them (the last one also a prefix).
export function queryWords(query) {
  return String(query || '').split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).slice(0, 16);
}

function pattern(words) {
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // The last word is a prefix (as the search reads it): its mark runs to the end of the word.
  escaped[escaped.length - 1] += '[\\p{L}\\p{N}_]*';
  return new RegExp(escaped.sort((a, b) => b.length - a.length).join('|'), 'giu');
}

// Wraps each occurrence of the query's words inside `root`; returns the marks made.
export function markWords(root, query) {
  const words = queryWords(query);
  if (!root || !words.length) return [];
  const re = pattern(words);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement && node.parentElement.closest('mark, button, summary')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  const marks = [];
  for (const node of nodes) {
    const text = node.nodeValue;
    re.lastIndex = 0;
    if (!re.test(text)) continue;
    re.lastIndex = 0;
    const fragment = document.createDocumentFragment();
    let last = 0;
    for (let m = re.exec(text); m && marks.length < MAX_MARKS; m = re.exec(text)) {
      if (!m[0]) break;
      fragment.append(document.createTextNode(text.slice(last, m.index)));
      const mark = document.createElement('mark');
      mark.className = 'search-hit';
      mark.textContent = m[0];
      fragment.append(mark);
      marks.push(mark);
      last = m.index + m[0].length;
    }
    fragment.append(document.createTextNode(text.slice(last)));
    node.replaceWith(fragment);
    if (marks.length >= MAX_MARKS) break;
  }
  return marks;
}
