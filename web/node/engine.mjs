// The engine (build-web/locksim-engine.js) in Node: what the page's worker
// does (web/page/worker.js), for the build (web/node/assemble.mjs) and the
// tests (web/test/). One request at a time; answers are objects.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

export async function loadEngine(path) {
  const require = createRequire(import.meta.url);
  const create = require(resolve(path));
  let onProgress = null;
  const module = await create({ onProgress: (json) => onProgress && onProgress(JSON.parse(json)), print: () => {}, printErr: (t) => process.stderr.write(t + '\n') });
  return {
    ask(request, progress = null) {
      onProgress = progress;
      const ptr = module.ccall('locksim_request', 'number', ['string'], [JSON.stringify(request)]);
      const text = module.UTF8ToString(ptr);
      module._locksim_free(ptr);
      onProgress = null;
      return JSON.parse(text);
    },
  };
}
