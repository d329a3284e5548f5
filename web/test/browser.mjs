// The playground in a real browser: Debian's headless Chromium opens the
// built page as a file (file://…/locksim.html#scenario=kleppmann/gc-pause),
// and the page must run K1 by itself and show its verdict and the trace hash
// the native locksim computes; then the pause's slider is moved to 20 s and
// the verdict becomes safe; then the page switches to Chinese and tells the
// same run in Chinese. Nothing the page asks for may come from the network
// (the page is one file; Chromium would log a failed load as an error).
//
//   node web/test/browser.mjs LOCKSIM PAGE.html [--screenshot OUT.png]
//
// Prints the time from the page's navigation to K1's verdict on screen
// (the page's own stamp, performance.now(): data-first-verdict-ms), the same
// from the end of the page's load event (the navigation's loadEventEnd), and the
// engine's start-up. Exit 77 (skipped, for ctest) when PAGE.html is not
// built (scripts/build-web) or Chromium is not installed. --screenshot
// writes the page as it shows K1 (the README's picture).
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Browser, CHROMIUM } from './cdp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const shotAt = args.indexOf('--screenshot');
const shot = shotAt >= 0 ? args.splice(shotAt, 2)[1] : null;
const [locksim, pagePath] = args;
if (!locksim || !pagePath) {
  console.error('usage: browser.mjs LOCKSIM PAGE.html [--screenshot OUT.png]');
  process.exit(2);
}
if (!existsSync(pagePath)) {
  console.log(`skipped: ${pagePath} is not built (scripts/build-web builds it)`);
  process.exit(77);
}
if (!existsSync(CHROMIUM)) {
  console.log(`skipped: ${CHROMIUM} is not installed (scripts/install-deps --web installs it)`);
  process.exit(77);
}

const K1 = 'scenarios/kleppmann/gc-pause.toml';
function nativeRun(path) {
  try {
    return JSON.parse(execFileSync(locksim, ['run', path, '--format', 'json'], { cwd: root, encoding: 'utf8' }));
  } catch (e) {
    if (e.status === 1 && typeof e.stdout === 'string') return JSON.parse(e.stdout);
    throw e;
  }
}
const native = nativeRun(K1);

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'}  ${what}`);
  if (!ok) ++failures;
}

// The verdict's element once a run has been shown: its state, kinds, hash, words.
const VERDICT = `(() => { const v = document.getElementById('verdict');
  return v.dataset.state === 'done' ? { kinds: v.dataset.kinds, hash: v.dataset.hash, text: v.textContent,
    shownHash: (document.getElementById('tracehash') || {}).textContent } : null; })()`;

const browser = await Browser.launch({ width: 1440, height: 1000 });
try {
  const url = pathToFileURL(resolve(pagePath)).href + '#scenario=kleppmann/gc-pause';
  const page = await browser.open(url);
  const k1 = await page.until(VERDICT, { what: "K1's verdict" });
  check(k1.kinds === 'overlap,stale-write,lost-update', `K1's verdict: ${k1.text}`);
  check(k1.hash === native.trace_hash && k1.shownHash === native.trace_hash,
        `K1's trace hash on the page ${k1.shownHash}, native ${native.trace_hash}`);
  const shown = await page.eval(`({ story: document.querySelectorAll('#story > li').length,
    svg: !!document.querySelector('#diagram svg'), title: document.getElementById('title').textContent,
    first: Number(document.body.dataset.firstVerdictMs), status: document.getElementById('status').textContent,
    load: Math.round(performance.getEntriesByType('navigation')[0].loadEventEnd) })`);
  check(shown.story === 17, `the story: ${shown.story} lines (the command line tells 17)`);
  check(shown.svg, 'the space-time diagram is drawn');
  check(shown.title === 'GC pause outlives the lease', `the title: ${shown.title}`);
  console.log(`      from navigation to K1's verdict on screen: ${shown.first} ms; the load event ended at ${shown.load} ms, ` +
              `so ${shown.first - shown.load} ms after load (${shown.status})`);
  if (shot) {
    await new Promise((r) => setTimeout(r, 200));  // the layout settles
    writeFileSync(shot, await page.screenshot());
    console.log(`      screenshot: ${shot}`);
  }

  // The pause's slider, moved to 20 s by its text box: client1 wakes at 21 s, before its lease ends.
  const moved = await page.eval(`(() => {
    const box = document.querySelector('.slider[data-parameter="fault[1].duration"] .value input');
    if (!box) return false;
    box.value = '20s';
    box.dispatchEvent(new Event('change'));
    return true; })()`);
  check(moved, 'the pause has a slider (fault[1].duration)');
  const safe = await page.until(`(() => { const v = ${VERDICT}; return v && v.kinds === '' ? v : null; })()`,
                                { what: 'a safe verdict after the pause is 20s' });
  const edited = await page.eval(`document.getElementById('toml').value`);
  check(edited.includes('duration = "20s"') && !edited.includes('duration = "40s"'), 'the text now says duration = "20s"');
  check(safe.text.length > 0, `with a 20 s pause: ${safe.text}`);

  // Chinese: the page's words and the engine's.
  await page.eval(`document.getElementById('lang-zh').click()`);
  const zh = await page.until(`(() => { const v = ${VERDICT}; return v && v.text.startsWith('判定') ? v : null; })()`,
                              { what: 'the verdict in Chinese' });
  const lang = await page.eval(`({ html: document.documentElement.lang, run: document.getElementById('run').textContent })`);
  check(lang.html === 'zh-CN' && lang.run !== 'Run', `in Chinese: ${zh.text} (the button says ${lang.run})`);
  check(page.errors.length === 0, `no errors in the page${page.errors.length ? ': ' + page.errors.join(' | ') : ''}`);
} finally {
  browser.close();
}
console.log(failures ? `${failures} checks failed` : 'the playground works in headless Chromium');
process.exit(failures ? 1 : 0);
