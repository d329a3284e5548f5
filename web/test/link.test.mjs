// The playground's links (web/page/link.js): what a lecturer sends must open
// the same scenario, the same numbers, the same language. Needs Node only,
// not the web build: the suite runs it always (CMakeLists.txt).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const link = require(join(root, 'web', 'page', 'link.js'));
const k1 = readFileSync(join(root, 'scenarios', 'kleppmann', 'gc-pause.toml'), 'utf8');

test('a catalogue scenario is its name, readable', async () => {
  const hash = await link.encode({ scenario: 'kleppmann/gc-pause', set: [], toml: null, lang: 'en', quiz: false });
  assert.equal(hash, 'scenario=kleppmann/gc-pause');
  const back = await link.decode('#' + hash);
  assert.deepEqual(back, { scenario: 'kleppmann/gc-pause', set: [], toml: null, lang: 'en', quiz: false });
});

test('a moved number travels as the sweep names it, brackets and all, and comes back split at its first "="', async () => {
  const state = { scenario: 'kleppmann/gc-pause', set: [['fault[1].duration', '20s'], ['lock.ttl', '5s']], toml: null, lang: 'zh', quiz: true };
  const hash = await link.encode(state);
  assert.equal(hash, 'scenario=kleppmann/gc-pause&set=fault[1].duration=20s&set=lock.ttl=5s&lang=zh&quiz=1');
  assert.deepEqual(await link.decode(hash), state);
  // A value may itself hold '=' once escaped; the parameter never does.
  assert.deepEqual((await link.decode('set=node[redis1].offset=-5s')).set, [['node[redis1].offset', '-5s']]);
});

test('an edited scenario travels whole: deflate-raw, base64url, and back byte for byte', async () => {
  const edited = k1.replace('duration = "40s"', 'duration = "20s"') + '\n# 中文注释: UTF-8 survives\n';
  const hash = await link.encode({ scenario: 'kleppmann/gc-pause', set: [['ignored', '1s']], toml: edited, lang: 'en', quiz: false });
  const packed = hash.match(/toml=([^&]*)/)[1];
  assert.match(packed, /^z\.[A-Za-z0-9_-]+$/, 'compressed, and only base64url characters (no +, / or =)');
  assert.ok(packed.length < edited.length * 0.8, `compressed: ${packed.length} characters for ${edited.length}`);
  assert.ok(!hash.includes('set='), 'the whole text wins over moved numbers');
  const back = await link.decode('#' + hash);
  assert.equal(back.toml, edited);
  assert.equal(back.scenario, 'kleppmann/gc-pause');
});

test('a link written by an earlier page still opens: the format is fixed', async () => {
  // "title = \"x\"\n" deflate-raw compressed (zlib level 6) and base64url-encoded, made once and kept.
  assert.equal(await link.unpackText('z.K8ksyUlVsFVQqlDiAgA'), 'title = "x"\n');
  assert.equal(await link.unpackText('t.dGl0bGUgPSAieCIK'), 'title = "x"\n');
});

test('base64url is RFC 4648 §5: "-" and "_", no padding, every byte value', () => {
  const bytes = new Uint8Array(256).map((_, i) => i);
  const text = link.toBase64Url(bytes);
  assert.match(text, /^[A-Za-z0-9_-]+$/);
  assert.ok(text.includes('-') && text.includes('_'));
  assert.deepEqual(link.fromBase64Url(text), bytes);
  for (let n = 0; n < 5; ++n) assert.deepEqual(link.fromBase64Url(link.toBase64Url(bytes.subarray(0, n))), bytes.subarray(0, n));
});

test('a damaged link says what is wrong', async () => {
  await assert.rejects(link.unpackText('z.@@@'), /not base64url/);
  await assert.rejects(link.unpackText('z.AAAA'), /damaged/);
  await assert.rejects(link.unpackText('q.AAAA'), /neither compressed/);
});

test('unknown keys are left alone and a language other than zh is English', async () => {
  assert.deepEqual(await link.decode('scenario=redis/get-then-del&future=1&lang=fr'),
    { scenario: 'redis/get-then-del', set: [], toml: null, lang: 'en', quiz: false });
});
