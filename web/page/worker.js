// The page's worker: the engine (locksim-engine.js, WebAssembly inside) runs
// here, off the page's thread, so that a search never freezes the page. The
// page makes the worker from a Blob of the engine's text and this (a page
// opened as a file may start no worker from a file of its own).
//
// Messages in:  {module}              first: the engine's WebAssembly, compiled
//                                     by the page (app.js), which it starts from
//               {id, request}         a request of web/api.hpp, as an object
// Messages out: {ready, ms}           once, when the engine has started
//               {id, progress}        as a search goes
//               {id, answer}          the answer, as an object
/* global createLocksimEngine */
(function () {
  'use strict';
  const started = performance.now();
  let engine = null;
  const queue = [];
  let current = null;  // the id of the request being answered, for progress

  function answer(id, request) {
    current = id;
    const ptr = engine.ccall('locksim_request', 'number', ['string'], [JSON.stringify(request)]);
    const text = engine.UTF8ToString(ptr);
    engine._locksim_free(ptr);
    current = null;
    self.postMessage({ id, answer: JSON.parse(text) });
  }

  self.onmessage = (e) => {
    if (e.data.module) start(e.data.module);
    else if (engine) answer(e.data.id, e.data.request);
    else queue.push(e.data);
  };

  const start = (wasm) => createLocksimEngine({
    onProgress: (json) => { if (current !== null) self.postMessage({ id: current, progress: JSON.parse(json) }); },
    print: () => {},
    printErr: (text) => self.postMessage({ log: text }),
    // The engine's own text holds no WebAssembly (assemble.mjs): it is
    // instantiated from the module the page compiled.
    instantiateWasm: (imports, receive) => {
      WebAssembly.instantiate(wasm, imports).then((instance) => receive(instance, wasm),
                                                  (error) => self.postMessage({ failed: String(error) }));
      return {};
    },
  }).then((module) => {
    engine = module;
    self.postMessage({ ready: true, ms: performance.now() - started });
    while (queue.length) {
      const m = queue.shift();
      answer(m.id, m.request);
    }
  }, (error) => self.postMessage({ failed: String(error) }));
})();
