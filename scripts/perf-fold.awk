# perf-fold.awk - fold `perf script -F comm,ip,sym` output into one line
# per distinct stack: "thread;outermost;...;innermost COUNT" (the
# flame-graph "folded" format), small enough to bring back from the GPU
# machine and read with scripts/perf-stacks.py.
function emit(   s, i) {
	if (comm != "") {
		s = comm
		for (i = n; i >= 1; i--)
			s = s ";" f[i]
		c[s]++
	}
	n = 0
	comm = ""
}
/^[^ \t]/ { emit(); comm = $1; next }
/^[ \t]*$/ { emit(); next }
{
	sym = $2
	sub(/\+0x[0-9a-f]+$/, "", sym)
	if (sym == "" || sym == "[unknown]")
		sym = "?"
	f[++n] = sym
}
END {
	emit()
	for (s in c)
		print s, c[s]
}
