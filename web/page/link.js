// The playground's links: what a page shows, in the part of its address
// after '#', so that a lecturer can send a student straight to it and the
// page needs no server.
//
//   #scenario=kleppmann/gc-pause                   a catalogue scenario (scenarios/NAME.toml), run at once
//   &set=fault[1].duration=20s                     ... with a number moved (as `locksim sweep --set` names it;
//                                                  repeated for more than one)
//   &toml=z.BASE64URL                              ... or a scenario's whole text: deflate-raw compressed
//                                                  ('z.'), or as it is ('t.') where the browser cannot compress
//   &lang=zh                                       the words in Chinese
//   &quiz=1                                        quiz mode: predict first, then run
//
// Plain JavaScript for the page and for Node (web/test/link.test.mjs).
(function (root) {
  'use strict';

  // base64url (RFC 4648 §5): '-' and '_' for '+' and '/', no padding.
  function toBase64Url(bytes) {
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function fromBase64Url(text) {
    if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('the link\'s scenario is not base64url');
    const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
    const binary = atob(padded);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  async function through(stream, bytes) {
    const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
    return new Uint8Array(await out.arrayBuffer());
  }

  const canCompress = typeof CompressionStream === 'function';

  async function packText(text) {
    const bytes = new TextEncoder().encode(text);
    if (!canCompress) return 't.' + toBase64Url(bytes);
    return 'z.' + toBase64Url(await through(new CompressionStream('deflate-raw'), bytes));
  }

  async function unpackText(packed) {
    const dot = packed.indexOf('.');
    const how = packed.slice(0, dot), body = packed.slice(dot + 1);
    const bytes = fromBase64Url(body);
    if (how === 't') return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    if (how !== 'z') throw new Error('the link\'s scenario is neither compressed (z.) nor plain (t.)');
    if (typeof DecompressionStream !== 'function') throw new Error('this browser cannot decompress the link\'s scenario');
    let inflated;
    try {
      inflated = await through(new DecompressionStream('deflate-raw'), bytes);
    } catch (e) {
      throw new Error('the link\'s scenario is damaged (it does not decompress): was it cut short?');
    }
    return new TextDecoder('utf-8', { fatal: true }).decode(inflated);
  }

  // {scenario, set: [[parameter, value]], toml, lang, quiz} -> "scenario=...&..." (without '#').
  async function encode(state) {
    const parts = [];
    const esc = (s) => encodeURIComponent(s).replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/%2F/g, '/');
    if (state.scenario) parts.push('scenario=' + esc(state.scenario));
    if (state.toml) parts.push('toml=' + (await packText(state.toml)));
    else for (const [parameter, value] of state.set || []) parts.push('set=' + esc(parameter) + '=' + esc(value));
    if (state.lang && state.lang !== 'en') parts.push('lang=' + esc(state.lang));
    if (state.quiz) parts.push('quiz=1');
    return parts.join('&');
  }

  // The inverse; unknown keys are ignored (a newer page's link in an older page).
  async function decode(hash) {
    const state = { scenario: null, set: [], toml: null, lang: 'en', quiz: false };
    const text = hash.replace(/^#/, '');
    if (!text) return state;
    for (const part of text.split('&')) {
      const eq = part.indexOf('=');
      const key = eq < 0 ? part : part.slice(0, eq);
      const value = eq < 0 ? '' : part.slice(eq + 1);
      if (key === 'scenario') state.scenario = decodeURIComponent(value);
      else if (key === 'toml') state.toml = await unpackText(value);
      else if (key === 'lang') state.lang = decodeURIComponent(value) === 'zh' ? 'zh' : 'en';
      else if (key === 'quiz') state.quiz = value !== '0';
      else if (key === 'set') {
        // "fault[1].duration=20s": the parameter up to the first '=', the value after it.
        const at = value.indexOf('=');
        if (at > 0) state.set.push([decodeURIComponent(value.slice(0, at)), decodeURIComponent(value.slice(at + 1))]);
      }
    }
    return state;
  }

  const api = { encode, decode, packText, unpackText, toBase64Url, fromBase64Url };
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
  else root.LocksimLink = api;
})(typeof self !== 'undefined' ? self : this);
