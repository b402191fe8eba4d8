#!/usr/bin/python3
"""Reference values and timings for semrank's exact WMD solver from POT.

Reads the pairs `semrank experiment wmd-speed --pairs-out FILE` wrote
(per pair: int32 n, int32 m, then n+m+n*m little-endian float64: a, b and
the cost matrix row-major), solves each with POT's ot.emd2 (the LEMON
network simplex in C++), and
  --values FILE    writes the optimal costs as little-endian float64, for
                   `semrank experiment wmd-speed --pot-values FILE`;
  --testdata FILE  writes the first --n-test pairs with their POT values as
                   JSON (testdata/wmd/pot_pairs.json, checked by the Go tests).
It prints the time per pair of ot.emd2 and of POT's lower-level
ot.lp.emd_c, both as wall time and as process CPU time (the machine is
shared, so CPU time is the steadier figure).

Run with the system Python that has python3-pot:
  /usr/bin/python3 scripts/wmd_reference.py --pairs PAIRS [--values OUT] [--testdata JSON --n-test 60]
"""
import argparse
import json
import struct
import sys
import time

import numpy as np
import ot


def read_pairs(path):
    raw = open(path, "rb").read()
    off, pairs = 0, []
    while off < len(raw):
        n, m = struct.unpack_from("<ii", raw, off)
        off += 8
        k = n + m + n * m
        v = np.frombuffer(raw, dtype="<f8", count=k, offset=off)
        off += 8 * k
        a, b = v[:n].copy(), v[n:n + m].copy()
        cost = v[n + m:].reshape(n, m).copy()
        pairs.append((a, b, cost))
    return pairs


def timed(fn, pairs):
    w0, c0 = time.perf_counter(), time.process_time()
    out = [fn(a, b, c) for a, b, c in pairs]
    return out, (time.perf_counter() - w0) / len(pairs), (time.process_time() - c0) / len(pairs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--values")
    ap.add_argument("--testdata")
    ap.add_argument("--n-test", type=int, default=60)
    args = ap.parse_args()
    pairs = read_pairs(args.pairs)
    print(f"POT {ot.__version__}, {len(pairs)} pairs")
    vals, wall, cpu = timed(lambda a, b, c: ot.emd2(a, b, c), pairs)
    print(f"ot.emd2:     {wall * 1e6:.2f} µs/pair wall, {cpu * 1e6:.2f} µs/pair CPU")
    _, wall2, cpu2 = timed(lambda a, b, c: ot.lp.emd_c(a, b, c, 100000, 1)[1], pairs)
    print(f"ot.lp.emd_c: {wall2 * 1e6:.2f} µs/pair wall, {cpu2 * 1e6:.2f} µs/pair CPU")
    if args.values:
        np.asarray(vals, dtype="<f8").tofile(args.values)
        print(f"wrote {args.values}")
    if args.testdata:
        recs = [{"a": a.tolist(), "b": b.tolist(), "cost": c.ravel().tolist(), "pot": float(v)}
                for (a, b, c), v in zip(pairs[:args.n_test], vals)]
        with open(args.testdata, "w") as f:
            json.dump({"source": "SemEval-2016 Task 3 (Nakov et al., 2016) sentence pairs; values from POT "
                       + ot.__version__ + " ot.emd2", "pairs": recs}, f)
        print(f"wrote {args.testdata}")


if __name__ == "__main__":
    sys.exit(main())
