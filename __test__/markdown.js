'use strict';
// Markdown as the docs' tests read it (not a test file itself: node --test
// runs *.test.js only): the prose outside fenced blocks, the anchors GitHub
// gives headings, and the relative links that must lead somewhere.

const fs = require('node:fs');
const path = require('node:path');

/** The markdown outside fenced blocks (links and headings in code are not links and headings). */
function prose(markdown) {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** GitHub's anchors for the headings of `markdown` (a repeated one gets -1, -2, ...). */
function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\s-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/**
 * What is wrong with the relative links of the Markdown file `file`: a
 * target that does not exist, or an anchor that no heading of its target
 * (a Markdown file, this one included) has. Links outside the repository
 * (`https:`, `mailto:`) are not followed.
 */
function brokenLinks(file) {
  const text = fs.readFileSync(file, 'utf8');
  const broken = [];
  const cache = new Map();
  const anchorsOf = (target) => {
    if (!cache.has(target)) cache.set(target, anchors(fs.readFileSync(target, 'utf8')));
    return cache.get(target);
  };
  for (const [, link] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
    const [target, anchor] = link.split('#');
    const resolved = target === '' ? file : path.resolve(path.dirname(file), target);
    if (!fs.existsSync(resolved)) broken.push(`${link}: no such file`);
    else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
      broken.push(`${link}: no heading with that anchor`);
    }
  }
  return broken;
}

module.exports = { prose, anchors, brokenLinks };
