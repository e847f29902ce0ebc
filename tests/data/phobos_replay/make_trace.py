#!/usr/bin/env python3
"""Writes a random operation sequence for tests/bitmapped_block.cpp's Phobos replay (stdout), one op per line:
  A id n       allocate(n)              N id n a     aligned_allocate(n, a)
  F id         deallocate               E id d       expand(d)
  R id n       reallocate(n)            (ids name live blocks; an op on a failed id is reported as '-')
Usage: make_trace.py SEED OPS BLOCK_SIZE. Then `ldc2 -O -run replay.d LEN < ops` prints Phobos' answers, which
make.sh pastes beside the ops. replay.d answers "skip" to a shrink that stays inside the block's last block
(Phobos' reallocate slices past the block there, a range error that alloy fixes) and does not run it."""
import random
import sys

seed, nops, bs = (int(x) for x in sys.argv[1:4])
r = random.Random(seed)
live = []  # [id, aligned]
nid = 0
for _ in range(nops):
    x = r.random()
    if x < 0.45 or not live:
        k = r.choice([1, 1, 1, 2, 3, 5, 8, 17, 40, 63, 64, 65, 70, 130, 200])
        n = max(1, k * bs - r.randrange(bs))
        print(f"A {nid} {n}")
        live.append([nid, False])
        nid += 1
    elif x < 0.5:
        n = r.randrange(1, 6 * bs)
        print(f"N {nid} {n} {r.choice([128, 256, 1024])}")
        live.append([nid, True])
        nid += 1
    elif x < 0.85:
        print(f"F {live.pop(r.randrange(len(live)))[0]}")
    elif x < 0.93:
        e = r.choice(live)
        if not e[1]:
            print(f"E {e[0]} {r.randrange(1, 4 * bs)}")
    else:
        e = r.choice(live)
        if not e[1]:
            print(f"R {e[0]} {r.randrange(1, 8 * bs)}")
