// Assembles the playground: one HTML file with everything in it (its style,
// its scripts, the engine with its WebAssembly, the catalogue of scenarios),
// so that it works opened as a file and from any static web server, and
// loads nothing from anywhere. Run by scripts/build-web:
//
//   node web/node/assemble.mjs ENGINE.js OUT.html
//
// The catalogue is every scenarios/**/*.toml, described by the engine itself
// (title, catalogue number, expected verdict), grouped by source in the
// order of docs/catalogue.md.
import { readFileSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { loadEngine } from './engine.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [enginePath, outPath] = process.argv.slice(2);
if (!enginePath || !outPath) {
  console.error('usage: node web/node/assemble.mjs ENGINE.js OUT.html');
  process.exit(2);
}

// The sources' groups, in the catalogue's order; others after them.
const GROUPS = [
  ['kleppmann', 'Kleppmann 2016'], ['redis', 'Redis'], ['redisson', 'Redisson'], ['antirez', 'antirez'],
  ['zookeeper', 'ZooKeeper'], ['etcd', 'etcd'], ['chubby', 'Chubby'], ['consul', 'Consul'],
  ['incidents', 'Incidents (bug reports)'], ['jepsen', 'Jepsen'], ['found', 'Found by explore'],
  ['matrix', 'Library matrix'],
];

function scenarioFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...scenarioFiles(path));
    else if (name.endsWith('.toml')) out.push(path);
  }
  return out;
}

const engine = await loadEngine(enginePath);
const catalogue = [];
for (const file of scenarioFiles(join(root, 'scenarios'))) {
  const path = relative(root, file);
  const name = path.replace(/^scenarios\//, '').replace(/\.toml$/, '');
  const toml = readFileSync(file, 'utf8');
  const d = engine.ask({ op: 'describe', toml, path });
  if (d.error) throw new Error(`${path}: ${d.error.message}`);
  const folder = name.split('/')[0];
  const group = GROUPS.findIndex(([f]) => f === folder);
  catalogue.push({ name, path, toml, title: d.title, id: d.catalogue, expected: d.expected,
                   group: group >= 0 ? GROUPS[group][1] : folder, order: group >= 0 ? group : GROUPS.length });
}
const idOrder = (id) => (id ? Number(id.slice(1)) : 1e9);
catalogue.sort((a, b) => a.order - b.order || a.group.localeCompare(b.group) || idOrder(a.id) - idOrder(b.id) || a.name.localeCompare(b.name));
for (const c of catalogue) delete c.order;

// Text that goes inside a <script> element whole: it may not end the element
// early, nor open an HTML comment there.
function scriptText(what, text) {
  for (const bad of ['</script', '<!--'])
    if (text.toLowerCase().includes(bad)) throw new Error(`${what} contains "${bad}": it cannot be inlined in a <script>`);
  return text;
}

// The engine's WebAssembly travels gzipped beside it, not as the base64 the
// engine carries it in (SINGLE_FILE): 1.1 MB of text instead of 3.2 MB for the
// browser to read and parse, and the page compiles it once for both workers
// while it sets itself up (app.js, worker.js). The engine's own text keeps an
// empty data URL where its WebAssembly was, so it never reads it itself.
const WASM_URI = /wasmBinaryFile="data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)"/;
const engineFull = readFileSync(enginePath, 'utf8');
const wasmMatch = engineFull.match(WASM_URI);
if (!wasmMatch) throw new Error(`${enginePath}: no WebAssembly inside as a base64 data URL (built without -sSINGLE_FILE=1?)`);
const engineText = engineFull.replace(WASM_URI, 'wasmBinaryFile="data:application/octet-stream;base64,"');
const wasmText = gzipSync(Buffer.from(wasmMatch[1], 'base64'), { level: 9 }).toString('base64');

const page = (name) => readFileSync(join(root, 'web', 'page', name), 'utf8');
let version = 'unknown';
try {
  version = execFileSync('git', ['-C', root, 'describe', '--always', '--dirty'], { encoding: 'utf8' }).trim();
} catch { /* a tarball: no git */ }
const parts = {
  VERSION: version,
  STYLE: page('style.css'),
  CATALOGUE: JSON.stringify(catalogue).replace(/</g, '\\u003c'),
  ENGINE: scriptText('the engine', engineText),
  WASM: wasmText,
  WORKER: scriptText('worker.js', page('worker.js')),
  WORDS: scriptText('words.js', page('words.js')),
  LINK: scriptText('link.js', page('link.js')),
  APP: scriptText('app.js', page('app.js')),
};
// One pass, so that no part's text is searched for another's placeholder.
const html = page('index.html').replace(/\{\{([A-Z]+)\}\}/g, (m, key) => {
  if (!(key in parts)) throw new Error(`index.html: unknown placeholder ${m}`);
  return parts[key];
});
writeFileSync(outPath, html);
const raw = Buffer.byteLength(html);
const gz = gzipSync(html, { level: 9 }).length;
console.log(`${outPath}: ${catalogue.length} scenarios, ${(raw / 1e6).toFixed(2)} MB, ${(gz / 1e6).toFixed(2)} MB gzip -9`);
