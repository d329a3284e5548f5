#!/usr/bin/env python3
"""Regenerates the seed corpora under fuzz/corpus/ (run from the repository root,
after scripts/fuzz has built build-fuzz/ and scripts/build has built build/):

    fuzz/make_corpus.py

Seeds: the catalogue (scenarios/**/*.toml), the bad inputs of
tests/scenario_test.cpp (kFull with each case's substitution), the control
character regression inputs, field texts for fuzz_fields, and explore shard
results for fuzz_merge. Each target's libFuzzer then keeps only the seeds
that add coverage (-merge=1), so a corpus stays a few dozen files. The named
regression inputs (regression-*) are kept whatever their coverage.
"""
import ast
import glob
import os
import re
import shutil
import struct
import subprocess
import tempfile

ROOT = os.getcwd()
FUZZ = os.path.join(ROOT, "build-fuzz", "fuzz")
LOCKSIM = os.path.join(ROOT, "build", "locksim")

# The input fuzzing found (toml++ asserts on a table header key opening with
# a control character), and its neighbours.
REGRESSIONS = {
    "regression-control-character-header.toml":
        b'title = "t"\nabout = "a"\nsource = "s"\nduration = "10s"\n\n[lock]\nalgorithm = "redis-single"\nttl = "1s"\n'
        b'\n[[node]]\nname = "redis1"\n\n[[\x1dclient]]\nname = "client1"\n',
    "regression-control-character-line.toml":
        b'title = "t"\nabout = "a"\nsource = "s"\nduration = "10s"\n\n[lock]\nalgorithm = "redis-single"\nttl = "1s"\n'
        b'\n[[node]]\nname = "redis1"\n\n[[client]]\n\x1dname = "client1"\n',
}


def c_string(literal):
    """The value of a C++ string literal's body (escapes as in Python)."""
    return ast.literal_eval('"' + literal + '"')


def bad_inputs():
    text = open(os.path.join(ROOT, "tests", "scenario_test.cpp")).read()
    full = re.search(r'const char\* kFull = R"\((.*?)\)";', text, re.S).group(1)
    yield "kfull.toml", full.encode()
    table = text[text.index("const Case cases[] = {"):]
    table = table[:table.index("};")]
    pair = re.compile(r'\{"([^"]*)",\s*"((?:[^"\\]|\\.)*)",\s*"((?:[^"\\]|\\.)*)"', re.S)
    for i, m in enumerate(pair.finditer(table)):
        old, new = c_string(m.group(2)), c_string(m.group(3))
        if old in full:
            yield f"bad-{i:02d}.toml", full.replace(old, new, 1).encode()


def catalogue():
    for path in sorted(glob.glob(os.path.join(ROOT, "scenarios", "**", "*.toml"), recursive=True)):
        yield os.path.basename(path), open(path, "rb").read()


def fields():
    texts = {
        0: ["100ms", "1ms..3ms", "0s..200ms", "1ms...3ms", "20ms..10ms", "5 ms", "1.5s"],
        1: ["1ms", "1ms..50ms", "250us..2ms", "42ns", "..", "1ms.."],
        2: ["0s", "100ms..5s", "19.999999999s", "20s", "-1s"],
        3: ["0s", "5ms", "1ms..1ms", "2m", "1h..2h"],
        4: ["10s", "1.5s", "+20s", "0s", "73y", "106751d", "9223372036854775807ns"],
        5: ["1s", "19s", "0.000000001s", "1e3s"],
        6: ["-2s", "+1h", "0s", "-0s", "1.25ms"],
        7: ["client1 acquired", "client1 acquired#2", "client2 released#3", "storage started", "redis1 crashed#1",
            "client1", " acquired", "client1 acquired#0", "client1 acquired#999999"],
        8: ["acquired", "releasing#2", "lost", "sent", "write-rejected"],
        9: ["1", "2", "5", "0", "1000000", "01", "x"],
    }
    for field, values in texts.items():
        for i, t in enumerate(values):
            yield f"field{field}-{i}", bytes([field]) + t.encode()
    for i, n in enumerate([0, 1, 999, 10**9 + 7, -(10**12), 2**61]):
        yield f"ns-{i}", bytes([0]) + struct.pack("<q", n)


def shards(tmp):
    plans = [("scenarios/redisson/watchdog-stw-pause.toml", 40, 3, []),
             ("scenarios/kleppmann/redlock-clock-jump.toml", 30, 2, ["--faults", "pause,clock-jump"]),
             ("scenarios/redis/setnx-no-ttl-crash.toml", 20, 1, ["--max-pause", "2s", "--keep-faults"])]
    for n, (scenario, runs, count, extra) in enumerate(plans):
        texts = []
        for k in range(1, count + 1):
            # --result: with --shard, explore also writes its result to a file (by default beside us).
            out = subprocess.run([LOCKSIM, "explore", scenario, "--runs", str(runs), "--shard", f"{k}/{count}",
                                  "--format", "json", "--result", os.path.join(tmp, f"shard-{n}-{k}.json")] + extra,
                                 check=True, capture_output=True, cwd=ROOT).stdout
            texts.append(out.strip())
        yield f"merge-{n}-all", b"\0".join(texts)
        yield f"merge-{n}-first", texts[0]
        yield f"merge-{n}-reversed", b"\0".join(reversed(texts))
    yield "merge-not-json", b"{not json"
    yield "merge-wrong-shape", b'{"options": 1, "shard": [1, 2], "violations": {}}'


def write(directory, seeds):
    os.makedirs(directory, exist_ok=True)
    for name, data in seeds:
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        raw = {
            "scenario": list(catalogue()) + list(bad_inputs()),
            "roundtrip": list(catalogue()) + [next(bad_inputs())],  # kFull; bad inputs only reach the loader
            "fields": list(fields()),
            "merge": list(shards(tmp)),
        }
        for target, seeds in raw.items():
            staged = os.path.join(tmp, target)
            write(staged, seeds)
            corpus = os.path.join(ROOT, "fuzz", "corpus", target)
            shutil.rmtree(corpus, ignore_errors=True)
            os.makedirs(corpus)
            subprocess.run([os.path.join(FUZZ, "fuzz_" + target), "-merge=1", corpus, staged],
                           check=True, capture_output=True)
            if target == "scenario":
                write(corpus, REGRESSIONS.items())
            print(f"{target}: {len(seeds)} seeds, {len(os.listdir(corpus))} kept")


if __name__ == "__main__":
    main()
