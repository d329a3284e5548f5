// The same traces byte for byte, in the browser and on the command line:
// every catalogue scenario run by the WebAssembly engine (wasm32: 4-byte
// pointers, size_t and long; libc++ and musl) and by the native locksim
// (x86-64: 8-byte ones; libstdc++ and glibc) must give the same trace hash,
// the same text report in English and in Chinese, the same JSON report, and
// the same summary of 50 explored runs (random fault schedules drawn from
// the same seeds).
//
//   node --experimental-wasm-return-call web/test/determinism.mjs LOCKSIM ENGINE.js
//
// Exit 77 (skipped, for ctest) when ENGINE.js is not built (scripts/build-web).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../node/engine.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [locksim, enginePath] = process.argv.slice(2);
if (!locksim || !enginePath) {
  console.error('usage: determinism.mjs LOCKSIM ENGINE.js');
  process.exit(2);
}
if (!existsSync(enginePath)) {
  console.log(`skipped: ${enginePath} is not built (scripts/build-web builds it)`);
  process.exit(77);
}

function scenarioFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...scenarioFiles(path));
    else if (name.endsWith('.toml')) out.push(relative(root, path));
  }
  return out;
}

// The native program's stdout, whatever its exit status (1: not as expected).
function native(args) {
  try {
    return execFileSync(locksim, args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 1 << 28 });
  } catch (e) {
    if (e.status === 1 && typeof e.stdout === 'string') return e.stdout;
    throw e;
  }
}

function firstDifference(a, b) {
  const la = a.split('\n'), lb = b.split('\n');
  for (let i = 0; i < Math.max(la.length, lb.length); ++i)
    if (la[i] !== lb[i]) return `line ${i + 1}:\n    native: ${la[i]}\n    wasm:   ${lb[i]}`;
  return 'none';
}

const engine = await loadEngine(enginePath);
const files = scenarioFiles(join(root, 'scenarios'));
const EXPLORE_RUNS = 50;
let failures = 0;
const fail = (path, what) => { ++failures; console.log(`DIFFERS  ${path}: ${what}`); };

for (const path of files) {
  const toml = readFileSync(join(root, path), 'utf8');
  const nativeJson = JSON.parse(native(['run', path, '--format', 'json']));
  const en = engine.ask({ op: 'run', toml, path, lang: 'en', json: true });
  if (en.error) { fail(path, `the engine refused it: ${en.error.message}`); continue; }
  if (en.trace_hash !== nativeJson.trace_hash) fail(path, `trace hash ${en.trace_hash} in WebAssembly, ${nativeJson.trace_hash} native`);
  if (JSON.stringify(en.json) !== JSON.stringify(nativeJson)) fail(path, `the JSON report differs: ${firstDifference(JSON.stringify(nativeJson, null, 1), JSON.stringify(en.json, null, 1))}`);
  const nativeText = native(['run', path]);
  if (en.report !== nativeText) fail(path, `the text report differs at ${firstDifference(nativeText, en.report)}`);
  const zh = engine.ask({ op: 'run', toml, path, lang: 'zh' });
  const nativeZh = native(['run', path, '--lang', 'zh']);
  if (zh.report !== nativeZh) fail(path, `the Chinese report differs at ${firstDifference(nativeZh, zh.report)}`);
  const explored = engine.ask({ op: 'explore', toml, path, runs: EXPLORE_RUNS });
  const nativeExplore = native(['explore', path, '--runs', String(EXPLORE_RUNS)]);
  if (explored.error) fail(path, `explore refused: ${explored.error.message}`);
  else if (explored.text !== nativeExplore) fail(path, `explore's summary differs at ${firstDifference(nativeExplore, explored.text)}`);
  if (process.env.VERBOSE) console.log(`same     ${path}  ${en.trace_hash}`);
}

console.log(`${files.length} catalogue scenarios: trace hash, text report (English, Chinese), JSON report and ${EXPLORE_RUNS} explored runs ` +
  (failures ? `— ${failures} differences` : 'the same in WebAssembly as native'));
process.exit(failures ? 1 : 0);
