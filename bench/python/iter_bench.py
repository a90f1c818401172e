"""make bench: what the Python module costs per sample, on the same trace.

For each trace (arguments), each job's best time of --runs, per sample:
  open        nettrace.open(bytes): the C parse and resolve, no Python per sample
  samples     iterating trace.samples() and touching each sample's leaf frame
  stream      nettrace.Parser with an on_sample callback, less the same parse
              without callbacks: the price of a Python callback per sample
The per-sample overhead of iteration is 'samples' (its cost is Python's alone:
the trace is already built).
"""
import argparse
import os
import time

import nettrace


def best(fn, runs):
    t = None
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        d = time.perf_counter() - start
        t = d if t is None or d < t else t
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    print("%-52s %8s %10s %12s %12s" % ("trace", "samples", "open ms", "samples() us", "stream us"))
    for path in args.traces:
        with open(path, "rb") as f:
            data = f.read()
        n = len(nettrace.open(data))
        if n == 0:
            continue
        t_open = best(lambda: nettrace.open(data).close(), args.runs)
        trace = nettrace.open(data)

        def iterate():
            leaves = 0
            for s in trace.samples():
                if s.frames and s.frames[0].method:
                    leaves += 1
            return leaves

        def stream(callback=True):
            count = [0]

            def on_sample(s):
                count[0] += 1
            p = nettrace.Parser(on_sample=on_sample if callback else None)
            p.feed(data)
            p.close()

        # A fresh trace each run would time the frame caches' filling too:
        # both are reported (first run, then the best of the rest).
        t_iter_first = best(iterate, 1)
        t_iter = best(iterate, args.runs)
        t_stream = best(stream, args.runs) - best(lambda: stream(False), args.runs)
        trace.close()
        print("%-52s %8d %10.2f %5.2f (%5.2f) %12.2f" % (
            os.path.basename(path)[:52], n, t_open * 1e3, t_iter / n * 1e6, t_iter_first / n * 1e6,
            t_stream / n * 1e6))
    print("samples() us: per sample, best run (first run, filling the frame caches, in parentheses)")


if __name__ == "__main__":
    main()
