"""Moves the ring's cp.async block of a pipelined matmul's PTX (from the last mma.sync of the
loop to its commit_group) to just after mma number AFTER: an experiment on where the copies sit
among the mmas (docs/performance.md, session 6).

    python3 bench/ptx_move_copies.py IN.ptx OUT.ptx AFTER
"""
import sys
src, dst, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
L = open(src).read().split('\n')
# the loop body: from 'cp.async.wait_group 1' to the loop's 'cp.async.commit_group'
w = next(i for i, l in enumerate(L) if 'cp.async.wait_group \t1' in l or 'cp.async.wait_group 1' in l.replace('\t', ' '))
mm = [i for i in range(w, len(L)) if 'mma.sync' in L[i]]
c = next(i for i in range(mm[-1], len(L)) if 'cp.async.commit_group' in L[i])
blk = L[mm[-1] + 5:c + 1]
rest = L[:mm[-1] + 5] + L[c + 1:]
ins = mm[after - 1] + 5
out = rest[:ins] + blk + rest[ins:]
open(dst, 'w').write('\n'.join(out))
print(f"moved {len(blk)} lines after mma #{after} of {len(mm)}")
