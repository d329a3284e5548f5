// The playground: a catalogue scenario or an edited one, run by locksim's
// own engine (WebAssembly, in a worker), told as the command line tells it.
// The page holds no simulation logic: every verdict, story, diagram, slider
// and search result is the engine's answer (web/api.hpp).
/* global LocksimWords, LocksimLink */
(function () {
  'use strict';
  const say = (key, args) => LocksimWords.say(state.lang, key, args);
  const $ = (id) => document.getElementById(id);
  const loadStart = 0;  // performance.now() counts from the navigation's start

  const catalogue = JSON.parse($('catalogue').textContent);
  const byName = new Map(catalogue.map((c) => [c.name, c]));
  const DEFAULT = 'kleppmann/gc-pause';

  const state = {
    lang: 'en',
    name: DEFAULT,      // the catalogue scenario shown, or the one an edit started from
    path: '',           // the path the story names (scenarios/NAME.toml)
    toml: '',           // the text that runs
    moves: [],          // [parameter, value text] moved by sliders since the catalogue text (for a readable link)
    typed: false,       // the text was edited by hand (the link carries the whole text)
    quiz: false,
    revealed: true,     // in quiz mode: the prediction was checked
    described: null,    // the engine's describe answer for the text
    result: null,       // the last run's answer
    firstVerdict: null,
  };

  // ---- The engine: a worker made from the engine's text and the worker's glue ----

  // The engine's WebAssembly, gzipped in the page (web/node/assemble.mjs):
  // unpacked and compiled once, as soon as the page runs, and given to each
  // worker as a compiled module.
  const wasmModule = (async () => {
    const data = 'data:application/octet-stream;base64,' + $('engine-wasm').textContent;
    const gzipped = await (await fetch(data)).blob();
    const bytes = await new Response(gzipped.stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();
    return WebAssembly.compile(bytes);
  })();

  let workerUrl = null;
  function workerSource() {
    if (!workerUrl) {
      const text = $('engine-source').textContent + '\n' + $('worker-source').textContent;
      workerUrl = URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
    }
    return workerUrl;
  }

  class Engine {
    constructor() { this.worker = null; this.next = 1; this.waiting = new Map(); }
    start() {
      if (this.worker) return this.ready;
      this.worker = new Worker(workerSource());
      this.ready = new Promise((resolve, reject) => { this.started = resolve; this.failed = reject; });
      this.worker.onmessage = (e) => this.receive(e.data);
      this.worker.onerror = (e) => { this.failed(new Error(e.message)); e.preventDefault(); };
      const worker = this.worker;
      wasmModule.then((module) => worker.postMessage({ module }), (error) => this.failed(error));
      return this.ready;
    }
    receive(m) {
      if (m.ready) return this.started(m.ms);
      if (m.failed) return this.failed(new Error(m.failed));
      if (m.log) return console.warn('engine:', m.log);
      const w = this.waiting.get(m.id);
      if (!w) return;
      if (m.progress) { if (w.onProgress) w.onProgress(m.progress); return; }
      this.waiting.delete(m.id);
      w.resolve(m.answer);
    }
    ask(request, onProgress) {
      this.start();
      const id = this.next++;
      return new Promise((resolve, reject) => {
        this.waiting.set(id, { resolve, reject, onProgress });
        this.worker.postMessage({ id, request });
      });
    }
    // Ends whatever it is doing (a search); the next ask starts a new worker.
    stop() {
      if (!this.worker) return;
      this.worker.terminate();
      this.worker = null;
      for (const w of this.waiting.values()) w.reject(new Error('stopped'));
      this.waiting.clear();
    }
  }
  const runner = new Engine();    // runs, sliders, descriptions: always quick
  const searcher = new Engine();  // explore, shrink, sweeps: long, stoppable

  const withScenario = (request) => Object.assign({ toml: state.toml, path: state.path, lang: state.lang }, request);

  // ---- Words on the page ----

  function applyWords() {
    document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
    document.title = say('title');
    for (const el of document.querySelectorAll('[data-w]')) el.textContent = say(el.dataset.w);
    for (const b of document.querySelectorAll('.langs button')) b.setAttribute('aria-pressed', String(b.dataset.lang === state.lang));
    fillPicker();
  }

  function fillPicker() {
    const select = $('scenario');
    select.textContent = '';
    let group = null, groupName = null;
    for (const c of catalogue) {
      if (c.group !== groupName) {
        groupName = c.group;
        group = document.createElement('optgroup');
        group.label = c.group;
        select.appendChild(group);
      }
      const o = document.createElement('option');
      o.value = c.name;
      // In quiz mode a title would give the answer away: the file's name alone, as `run --quiz` names it.
      o.textContent = (c.id ? c.id + ' · ' : '') + (state.quiz && !state.revealed ? c.name : c.title);
      group.appendChild(o);
    }
    select.value = state.name;
  }

  // ---- The scenario: chosen, edited, moved ----

  function pathOf(name) { return 'scenarios/' + name + '.toml'; }

  function choose(name) {
    const c = byName.get(name) || byName.get(DEFAULT);
    state.name = c.name;
    state.path = c.path;
    state.toml = c.toml;
    state.moves = [];
    state.typed = false;
    showText();
  }

  function isEdited() { return state.typed || state.moves.length > 0 || (byName.get(state.name) || {}).toml !== state.toml; }

  function showText() {
    const area = $('toml');
    if (area.value !== state.toml) area.value = state.toml;
    layoutEditor(null);
    $('edited').hidden = $('reset').hidden = !isEdited();
    $('scenario').value = state.name;
  }

  function layoutEditor(badLine) {
    const area = $('toml');
    const lines = area.value.split('\n');
    let gutter = '', marks = '';
    lines.forEach((line, i) => {
      const bad = i + 1 === badLine;
      gutter += (bad ? '<span class="bad">' + (i + 1) + '</span>' : String(i + 1)) + '\n';
      marks += (bad ? '<span class="bad">' + escapeHtml(line || ' ') + '</span>' : escapeHtml(line)) + '\n';
    });
    $('gutter').innerHTML = gutter;
    $('marks').innerHTML = marks;
    area.style.height = '0px';
    area.style.height = Math.max(area.scrollHeight, 200) + 'px';
    area.style.width = '100%';
    if (area.scrollWidth > area.clientWidth) area.style.width = area.scrollWidth + 'px';
  }

  function escapeHtml(s) {
    return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }

  // ---- Asking the engine, the newest question winning ----

  let busy = false, again = false;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        await describeAndRun();
      } while (again);
    } finally {
      busy = false;
    }
  }

  // The run is asked first and the description with it: the worker answers
  // in order, so the verdict is not held up by the description (the
  // sliders' code compiles on its first call: about 60 ms of K1's first
  // second in Chromium). In quiz mode nothing runs before the prediction.
  async function describeAndRun() {
    const hidden = state.quiz && !state.revealed;
    const started = performance.now();
    // The catalogue knows a scenario's title: shown with its verdict, not
    // after the description that may answer later.
    const entry = byName.get(state.name);
    if (!hidden && entry && !isEdited()) $('title').textContent = entry.title;
    const running = hidden ? null : runner.ask(withScenario({ op: 'run' }));
    const describing = runner.ask(withScenario({ op: 'describe' }));
    let answer = null;
    if (running) {
      setVerdictPending();
      answer = await running;
      if (!answer.error) showRun(answer, performance.now() - started);
    }
    const described = await describing;
    if (described.error) return showError(described.error);
    hideError();
    state.described = described;
    showScenario(described);
    if (hidden) return showQuiz();
    if (answer && answer.error) showError(answer.error);
  }

  function showError(error) {
    const box = $('error');
    box.hidden = false;
    box.textContent = (error.internal ? say('internal') + ' ' : '') + error.message;
    layoutEditor(error.line || null);
    if (error.line && $('pane-edit').hidden) selectTab('edit');
    $('result').classList.add('stale');
    $('verdict').className = 'verdict pending';
    $('verdict').dataset.state = 'error';
  }

  function hideError() {
    $('error').hidden = true;
    layoutEditor(null);
    $('result').classList.remove('stale');
  }

  function showScenario(d) {
    $('title').textContent = state.quiz && !state.revealed ? '' : d.title;
    $('source').textContent = state.quiz && !state.revealed ? '' : d.source;
    // The file's lines joined (they were broken for an editor); a blank line stays a paragraph's end.
    $('about').textContent = d.about.replace(/([^\n])\n(?!\n)/g, '$1 ');
    $('about').hidden = state.quiz && !state.revealed;
    $('setup').hidden = !(state.quiz && !state.revealed);
    showSliders(d.sliders);
    showExploreKinds(d.explore_kinds || []);
  }

  function setVerdictPending() {
    const v = $('verdict');
    if (!state.result) { v.className = 'verdict pending'; v.textContent = say('running'); }
    v.dataset.state = 'running';
  }

  function showRun(r, ms) {
    state.result = r;
    const v = $('verdict');
    v.className = 'verdict ' + (r.verdict.length ? 'bad' : 'good');
    v.textContent = r.verdict_words;
    v.dataset.state = 'done';
    v.dataset.kinds = r.verdict.join(',');
    v.dataset.hash = r.trace_hash;
    const list = $('violations');
    list.textContent = '';
    for (const x of r.violations) {
      const li = document.createElement('li');
      li.innerHTML = '<span class="kind"></span><span class="when"></span><span class="words"></span>';
      li.querySelector('.kind').textContent = x.kind_words;
      li.querySelector('.when').textContent = formatSpan(x.at_ns, x.until_ns);
      li.querySelector('.words').textContent = x.words;
      list.appendChild(li);
    }
    $('diagram').innerHTML = r.svg;
    const story = $('story');
    story.textContent = '';
    for (const line of r.story) {
      const li = document.createElement('li');
      if (line.steps) {
        li.className = 'folded';
        const details = document.createElement('details');
        const summary = document.createElement('summary');
        summary.append(stamp(line.t), line.text);
        const inner = document.createElement('ol');
        for (const s of line.steps) {
          const sub = document.createElement('li');
          sub.append(stamp(s.t), s.text);
          inner.appendChild(sub);
        }
        details.append(summary, inner);
        li.appendChild(details);
      } else {
        li.append(stamp(line.t), line.text);
      }
      story.appendChild(li);
    }
    $('facts').innerHTML = '';
    $('facts').append(
      say('seed') + ' ' + r.seed + ' · ' + say('trace') + ' ',
      Object.assign(document.createElement('code'), { id: 'tracehash', textContent: r.trace_hash }),
      ' · ' + r.stats.events + ' ' + say('events') + ' · ' + r.stats.messages + ' ' + say('messages') +
        (ms !== undefined ? ' · ' + say('ranIn', { ms: Math.round(ms) }) : ''));
    $('replaycmd').textContent = r.replay;
    $('report').textContent = r.report;
    if (state.firstVerdict === null) {
      state.firstVerdict = performance.now() - loadStart;
      document.body.dataset.firstVerdictMs = String(Math.round(state.firstVerdict));
      showStatus();
    }
  }

  function stamp(t) {
    const span = document.createElement('span');
    span.className = 't';
    span.textContent = t;
    return span;
  }

  function formatSpan(at, until) {
    return at === until ? formatInstant(at) : formatInstant(at) + '–' + formatInstant(until);
  }
  function formatInstant(ns) { return (ns / 1e9).toFixed(3) + 's'; }

  let engineMs = null;
  function showStatus() {
    if (engineMs !== null && state.firstVerdict !== null)
      $('status').textContent = say('ready', { engine: Math.round(engineMs), first: Math.round(state.firstVerdict) });
  }

  // ---- Sliders: the sweep's knobs, moved in the text ----

  const NICE = [1, 2, 5];
  function niceAtLeast(x) {
    if (x <= 1) return 1;
    let p = Math.pow(10, Math.floor(Math.log10(x)));
    for (;;) {
      for (const m of NICE) if (m * p >= x) return m * p;
      p *= 10;
    }
  }

  // A slider's range and step in the unit's base: up to 2.5 times its value
  // (at least a second's worth for durations), in about 200 nice steps.
  function scaleOf(s) {
    const floor = s.unit === 'duration' ? 1e9 : s.unit === 'ppm' ? 1000 : 10;
    const top = niceAtLeast(Math.max(Math.abs(s.value) * 2.5, floor));
    const step = niceAtLeast(top / 200);
    const highest = Math.min(top, s.highest);
    const lowest = Math.max(s.lowest, s.unit === 'ppm' ? -highest : s.unit === 'duration' ? step : 0);
    return { lowest, highest, step };
  }

  function formatValue(unit, v) {
    if (unit === 'integer') return String(v);
    if (unit === 'ppm') return trim(v / 1000) + ' ppm';
    const a = Math.abs(v), sign = v < 0 ? '-' : '';
    if (a >= 1e9) return sign + trim(a / 1e9) + 's';
    if (a >= 1e6) return sign + trim(a / 1e6) + 'ms';
    if (a >= 1e3) return sign + trim(a / 1e3) + 'us';
    return sign + a + 'ns';
  }
  function trim(x) { return String(Math.round(x * 1000) / 1000); }

  function showSliders(sliders) {
    const box = $('sliders');
    box.textContent = '';
    box.hidden = state.quiz && !state.revealed;
    if (!sliders.length) {
      box.appendChild(Object.assign(document.createElement('p'), { className: 'hint', textContent: say('numbersNone') }));
      return;
    }
    for (const s of sliders) box.appendChild(sliderElement(s));
  }

  function sliderElement(s) {
    const scale = scaleOf(s);
    const div = document.createElement('div');
    div.className = 'slider';
    div.dataset.parameter = s.parameter;
    div.innerHTML = '<div class="label"><span class="name"></span><span class="value"><input type="text"></span></div>' +
      '<input type="range"><div class="strip"></div><div class="tools"><span class="param"></span><button class="link sweep"></button></div>';
    div.querySelector('.name').textContent = s.label;
    div.querySelector('.name').title = s.label;
    div.querySelector('.param').textContent = s.parameter;
    const text = div.querySelector('.value input');
    text.value = formatValue(s.unit, s.value);
    const range = div.querySelector('input[type=range]');
    range.min = String(scale.lowest);
    range.max = String(Math.max(scale.highest, s.value));
    range.step = String(scale.step);
    range.value = String(s.value);
    range.setAttribute('aria-label', s.parameter);
    range.addEventListener('input', () => {
      const v = Number(range.value);
      text.value = formatValue(s.unit, v);
      move(s.parameter, v, formatValue(s.unit, v).replace(' ppm', ''));
    });
    text.addEventListener('change', () => move(s.parameter, text.value.trim(), text.value.trim()));
    const sweep = div.querySelector('.sweep');
    sweep.textContent = say('sweepButton');
    sweep.addEventListener('click', () => sweepStrip(s, scale, div));
    return div;
  }

  // Moves one number: the engine edits the text where it writes it, then the text runs.
  let moving = null;
  function move(parameter, value, valueText) {
    moving = { parameter, value, valueText };
    if (!moveBusy) drainMoves();
  }
  let moveBusy = false;
  async function drainMoves() {
    moveBusy = true;
    try {
      while (moving) {
        const m = moving;
        moving = null;
        const answer = await runner.ask(withScenario({ op: 'set', parameter: m.parameter, value: m.value }));
        if (answer.error) { showError(answer.error); continue; }
        state.toml = answer.toml;
        state.moves = state.moves.filter(([p]) => p !== m.parameter).concat([[m.parameter, m.valueText]]);
        showText();
        await runOnly();
      }
    } finally {
      moveBusy = false;
    }
  }

  async function runOnly() {
    hideError();
    if (state.quiz && !state.revealed) {
      const d = await runner.ask(withScenario({ op: 'describe' }));
      if (!d.error) { state.described = d; showQuiz(); }
      return;
    }
    setVerdictPending();
    const started = performance.now();
    const answer = await runner.ask(withScenario({ op: 'run' }));
    if (answer.error) return showError(answer.error);
    showRun(answer, performance.now() - started);
    // The labels name the numbers as they now are ("client1 pauses for 20s").
    const d = await runner.ask(withScenario({ op: 'describe' }));
    if (!d.error) for (const s of d.sliders) {
      const el = document.querySelector('.slider[data-parameter="' + CSS.escape(s.parameter) + '"] .name');
      if (el) { el.textContent = s.label; el.title = s.label; }
    }
  }

  async function sweepStrip(s, scale, div) {
    const strip = div.querySelector('.strip');
    const button = div.querySelector('.sweep');
    const points = 60;
    const values = [];
    for (let i = 0; i < points; ++i) {
      const raw = scale.lowest + (Number(div.querySelector('input[type=range]').max) - scale.lowest) * i / (points - 1);
      values.push(Math.max(scale.lowest, Math.round(raw / scale.step) * scale.step));
    }
    button.disabled = true;
    strip.textContent = '';
    try {
      const answer = await searcher.ask(withScenario({ op: 'sweep', parameter: s.parameter, values }),
        (p) => { button.textContent = say('sweepRunning', { done: p.done, total: p.total }); });
      if (answer.error) return showError(answer.error);
      for (const c of answer.cells) {
        const span = document.createElement('span');
        span.className = c.verdict.length ? 'unsafe' : 'safe';
        span.title = formatValue(s.unit, c.value) + ': ' + (c.verdict.length ? c.verdict.join(', ') : say('sweepLegendSafe'));
        strip.appendChild(span);
      }
      strip.title = say('sweepHint');
    } catch (e) {
      /* stopped */
    } finally {
      button.disabled = false;
      button.textContent = say('sweepButton');
    }
  }

  // ---- Quiz: predict, then run ----

  async function showQuiz() {
    $('quizbox').hidden = false;
    $('result').classList.add('hidden-by-quiz');
    const q = await runner.ask(withScenario({ op: 'quiz' }));
    if (q.error) return showError(q.error);
    $('setup').textContent = q.setup;
    const box = $('quizkinds');
    const checked = new Set([...box.querySelectorAll('input:checked')].map((i) => i.value));
    box.textContent = '';
    for (const k of q.kinds.concat([{ kind: 'none', words: say('quizNone'), help: '' }])) {
      const label = document.createElement('label');
      label.innerHTML = '<input type="checkbox"> <b></b><span class="help"></span>';
      label.querySelector('input').value = k.kind;
      label.querySelector('input').checked = checked.has(k.kind);
      label.querySelector('b').textContent = k.words;
      label.querySelector('.help').textContent = k.help;
      box.appendChild(label);
    }
    $('quizscore').hidden = true;
  }

  async function checkQuiz() {
    const picked = [...$('quizkinds').querySelectorAll('input:checked')].map((i) => i.value);
    if (!picked.length) {
      $('quizscore').hidden = false;
      $('quizscore').className = 'score';
      $('quizscore').textContent = say('quizPick');
      return;
    }
    const predict = picked.filter((k) => k !== 'none');
    const answer = await runner.ask(withScenario({ op: 'run', predict }));
    if (answer.error) return showError(answer.error);
    state.revealed = true;
    $('quizscore').hidden = false;
    $('quizscore').className = 'score ' + (answer.right ? 'right' : 'wrong');
    $('quizscore').textContent = answer.score;
    $('result').classList.remove('hidden-by-quiz');
    fillPicker();
    showScenario(state.described);
    showRun(answer);
  }

  function setQuiz(on) {
    state.quiz = on;
    state.revealed = !on;
    $('quiz').setAttribute('aria-pressed', String(on));
    if (!on) {
      $('quizbox').hidden = true;
      $('result').classList.remove('hidden-by-quiz');
    }
    fillPicker();
    selectTab('story');
    refresh();
  }

  // ---- Explore and shrink ----

  function showExploreKinds(kinds) {
    const box = $('explorefaults');
    const was = new Set([...box.querySelectorAll('input')].filter((i) => !i.checked).map((i) => i.value));
    box.textContent = '';
    for (const k of kinds) {
      const label = document.createElement('label');
      label.innerHTML = '<input type="checkbox"> <span></span>';
      label.querySelector('input').value = k;
      label.querySelector('input').checked = !was.has(k);
      label.querySelector('span').textContent = k;
      box.appendChild(label);
    }
  }

  function exploreOptions() {
    const runs = Math.max(1, Math.min(1000000, Math.floor(Number($('exploreruns').value) || 1000)));
    const inputs = [...$('explorefaults').querySelectorAll('input')];
    const faults = inputs.filter((i) => i.checked).map((i) => i.value);
    return { runs, faults: faults.length === inputs.length ? [] : faults };
  }

  async function explore() {
    const options = exploreOptions();
    const progress = $('exploreprogress');
    progress.hidden = false;
    $('explorego').disabled = true;
    $('explorestop').hidden = false;
    $('exploreresult').textContent = '';
    let last = null;
    const base = { toml: state.toml, path: state.path, name: state.name };
    try {
      const answer = await searcher.ask(withScenario(Object.assign({ op: 'explore' }, options)), (p) => {
        last = p;
        progress.querySelector('.fill').style.width = (100 * p.done / p.total) + '%';
        progress.querySelector('.label').textContent = say('exploreProgress', p);
      });
      if (answer.error) return showError(answer.error);
      showFindings(answer, options, base);
    } catch (e) {
      if (last) $('exploreresult').textContent = say('exploreStopped', last);
    } finally {
      $('explorego').disabled = false;
      $('explorestop').hidden = true;
      progress.hidden = true;
    }
  }

  function showFindings(answer, options, base) {
    const s = answer.summary;
    const box = $('exploreresult');
    box.textContent = '';
    box.appendChild(Object.assign(document.createElement('p'), {
      textContent: say('exploreDone', { runs: s.runs, seed: s.base_seed, violating: s.violating_runs }),
    }));
    const table = document.createElement('table');
    table.className = 'found';
    table.innerHTML = '<thead><tr><th></th><th class="num"></th><th class="num"></th><th></th><th></th></tr></thead><tbody></tbody>';
    const heads = table.querySelectorAll('th');
    ['exploreKind', 'exploreCount', 'exploreRate', 'exploreCi', 'exploreFirst'].forEach((k, i) => { heads[i].textContent = say(k); });
    for (const [kind, v] of Object.entries(s.violations)) {
      const tr = document.createElement('tr');
      if (!v.runs) tr.className = 'none';
      tr.innerHTML = '<td></td><td class="num"></td><td class="num"></td><td class="num"></td><td></td>';
      const td = tr.querySelectorAll('td');
      td[0].textContent = kind;
      td[1].textContent = v.runs;
      td[2].textContent = (100 * v.runs / Math.max(1, s.runs)).toFixed(2) + '%';
      td[3].textContent = '[' + (100 * v.ci95[0]).toFixed(2) + '%, ' + (100 * v.ci95[1]).toFixed(2) + '%]';
      if (v.first) {
        const open = Object.assign(document.createElement('button'), { className: 'link', textContent: say('exploreOpen') + ' ' + v.first.seed });
        open.addEventListener('click', () => openFound(base, options, v.first.seed));
        const shrink = Object.assign(document.createElement('button'), { className: 'link', textContent: say('exploreShrink') });
        shrink.addEventListener('click', () => shrinkFound(base, options, v.first.seed, kind, shrink));
        td[4].append(open, ' ', shrink);
      } else {
        td[4].textContent = '—';
      }
      table.querySelector('tbody').appendChild(tr);
    }
    box.appendChild(table);
  }

  async function openFound(base, options, seed) {
    const answer = await searcher.ask(Object.assign({ op: 'replay', run_seed: seed, toml: base.toml, path: base.path, lang: state.lang }, options));
    if (answer.error) return showError(answer.error);
    openEdited(base.name, answer.toml);
    showRun(answer);
    selectTab('edit');
  }

  async function shrinkFound(base, options, seed, kind, button) {
    button.disabled = true;
    try {
      const answer = await searcher.ask(
        Object.assign({ op: 'shrink', run_seed: seed, kind, toml: base.toml, path: base.path, lang: state.lang }, options),
        (p) => { button.textContent = say('exploreShrinking', p); });
      if (answer.error) return showError(answer.error);
      button.textContent = say('shrunk', answer);
      openEdited(base.name, answer.toml);
      selectTab('story');
      refresh();
    } catch (e) {
      button.textContent = say('exploreShrink');
    } finally {
      button.disabled = false;
    }
  }

  function openEdited(name, toml) {
    state.name = name;
    state.path = pathOf(name);
    state.toml = toml;
    state.moves = [];
    state.typed = true;
    showText();
  }

  // ---- Links ----

  async function linkState() {
    const edited = state.typed || (state.moves.length === 0 && isEdited());
    return LocksimLink.encode({
      scenario: state.name,
      toml: edited ? state.toml : null,
      set: edited ? [] : state.moves,
      lang: state.lang,
      quiz: state.quiz,
    });
  }

  async function copyLink() {
    const hash = await linkState();
    history.replaceState(null, '', '#' + hash);
    const url = location.href;
    try {
      await navigator.clipboard.writeText(url);
      flash(say('linkCopied'));
    } catch (e) {
      $('linkbox').hidden = false;
      $('linktext').value = url;
      $('linktext').select();
    }
  }

  function flash(text) {
    const b = $('link');
    b.textContent = text;
    setTimeout(() => { b.textContent = say('copyLink'); }, 1500);
  }

  // The page as a link says: scenario, numbers moved or whole text, language, quiz.
  async function openLink() {
    let link;
    try {
      link = await LocksimLink.decode(location.hash);
    } catch (e) {
      link = { scenario: null, set: [], toml: null, lang: 'en', quiz: false };
      showError({ message: e.message });
    }
    state.lang = link.lang;
    choose(link.scenario && byName.has(link.scenario) ? link.scenario : DEFAULT);
    if (link.toml !== null) {
      state.toml = link.toml;
      state.typed = true;
      if (link.scenario && !byName.has(link.scenario)) state.path = pathOf(link.scenario);
    }
    for (const [parameter, value] of link.set) {
      const answer = await runner.ask(withScenario({ op: 'set', parameter, value }));
      if (answer.error) { showError(answer.error); break; }
      state.toml = answer.toml;
      state.moves.push([parameter, value]);
    }
    showText();
    applyWords();
    state.quiz = link.quiz;
    state.revealed = !link.quiz;
    $('quiz').setAttribute('aria-pressed', String(state.quiz));
    if (!state.quiz) { $('quizbox').hidden = true; $('result').classList.remove('hidden-by-quiz'); }
    fillPicker();
    await refresh();
  }

  // ---- Tabs and wiring ----

  function selectTab(which) {
    for (const t of ['story', 'edit']) {
      $('pane-' + t).hidden = t !== which;
      $('tab-' + t).setAttribute('aria-selected', String(t === which));
    }
    if (which === 'edit') layoutEditor(null);
  }

  let typing = null;
  function wire() {
    $('scenario').addEventListener('change', (e) => {
      choose(e.target.value);
      state.result = null;
      refresh();
    });
    $('run').addEventListener('click', () => refresh());
    $('quiz').addEventListener('click', () => setQuiz(!state.quiz));
    $('quizcheck').addEventListener('click', checkQuiz);
    $('quizleave').addEventListener('click', () => setQuiz(false));
    $('explore').addEventListener('click', () => {
      const box = $('explorebox');
      box.hidden = !box.hidden;
      $('explore').setAttribute('aria-pressed', String(!box.hidden));
    });
    $('exploreclose').addEventListener('click', () => { $('explorebox').hidden = true; $('explore').setAttribute('aria-pressed', 'false'); });
    $('explorego').addEventListener('click', explore);
    $('explorestop').addEventListener('click', () => searcher.stop());
    $('link').addEventListener('click', copyLink);
    for (const b of document.querySelectorAll('.langs button'))
      b.addEventListener('click', () => {
        if (state.lang === b.dataset.lang) return;
        state.lang = b.dataset.lang;
        applyWords();
        refresh();
      });
    $('tab-story').addEventListener('click', () => selectTab('story'));
    $('tab-edit').addEventListener('click', () => selectTab('edit'));
    $('reset').addEventListener('click', () => { choose(state.name); refresh(); });
    $('toml').addEventListener('input', () => {
      state.toml = $('toml').value;
      state.typed = true;
      state.moves = [];
      $('edited').hidden = $('reset').hidden = !isEdited();
      layoutEditor(null);
      clearTimeout(typing);
      typing = setTimeout(refresh, 250);
    });
    $('toml').addEventListener('keydown', (e) => {
      if (e.key === 'Tab') {  // a tab key types spaces, as TOML files here are indented
        e.preventDefault();
        document.execCommand('insertText', false, '  ');
      }
    });
    window.addEventListener('hashchange', async () => {
      if (location.hash === '#' + (await linkState())) return;  // our own link
      openLink();
    });
  }

  wire();
  applyWords();
  selectTab('story');
  $('verdict').className = 'verdict pending';
  $('verdict').textContent = say('starting');
  runner.start().then((ms) => { engineMs = ms; showStatus(); },
    (e) => { $('verdict').textContent = say('engineFailed', { error: e.message }); });
  openLink();
})();
