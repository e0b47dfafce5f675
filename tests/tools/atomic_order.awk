# awk -v S=SCOPE -f atomic_order.awk FILE.ptx: every atomic is acq_rel at scope S, by its
# own qualifier (atom.acq_rel.S.) or between fences (fence.acq_rel.S: the PTX memory
# model's release and acquire patterns), the fences and atomics taken in order.  Exit 1,
# naming the line, for an atomic that is not; and for PTX without atomics.
/^[ \t]*(@%p[0-9]+ )?(fence|atom)\./ {
    n++
    line[n] = FNR
    if (index($0, "fence.acq_rel." S ";")) kind[n] = "F"
    else if ($0 ~ /fence\./) kind[n] = "f"
    else if (index($0, "atom.acq_rel." S ".")) kind[n] = "A"
    else kind[n] = "a"
    atoms += kind[n] ~ /[aA]/
}
END {
    for (i = 1; i <= n; i++)
        if (kind[i] == "a" && !(kind[i - 1] == "F" && kind[i + 1] == "F")) {
            print "line " line[i] ": an atomic neither acq_rel at " S " nor between fence.acq_rel." S
            bad = 1
        }
    if (!atoms) { print "no atomics"; bad = 1 }
    exit bad
}
