// The page's own words (web/page/words.js): every word in both languages,
// and every word the page's markup and script name is in the table. Needs
// Node only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const page = join(dirname(fileURLToPath(import.meta.url)), '..', 'page');
const { words, say } = require(join(page, 'words.js'));

test('English and Chinese have the same words, none empty', () => {
  assert.deepEqual(Object.keys(words.zh).sort(), Object.keys(words.en).sort());
  for (const lang of ['en', 'zh'])
    for (const [key, text] of Object.entries(words[lang])) assert.ok(text.trim(), `${lang}.${key} is empty`);
});

test('each template has the same arguments in both languages', () => {
  const args = (t) => [...t.matchAll(/\{([a-z]+)\}/g)].map((m) => m[1]).sort();
  for (const key of Object.keys(words.en)) assert.deepEqual(args(words.zh[key]), args(words.en[key]), key);
});

test('every word the page names is in the table', () => {
  const html = readFileSync(join(page, 'index.html'), 'utf8');
  const app = readFileSync(join(page, 'app.js'), 'utf8');
  const named = new Set([...html.matchAll(/data-w="([A-Za-z]+)"/g)].map((m) => m[1]));
  for (const m of app.matchAll(/say\('([A-Za-z]+)'/g)) named.add(m[1]);
  assert.ok(named.size > 40);
  for (const key of named) assert.ok(key in words.en, `${key} is not in words.js`);
});

test('say fills the arguments', () => {
  assert.equal(say('zh', 'exploreProgress', { done: 3, total: 10, violating: 1 }), '已运行 3/10 次 · 1 次出现违规');
  assert.equal(say('en', 'errorAt', { line: 12 }), 'line 12');
});
