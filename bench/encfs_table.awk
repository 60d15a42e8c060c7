# SPDX-License-Identifier: GPL-2.0
# bench/encfs_table.awk - encfs_bench.csv as two tables (awk -F, -v
# labels="row=label\n..." -f bench/encfs_table.awk encfs_bench.csv):
# MB/s (sequential and dd workloads) or seconds (the others), then CPU
# seconds of the FUSE daemon + ptaskd per workload.
function head(w) {
	if (w ~ /^seqw/) return "write " substr(w, 5) "MB"
	if (w ~ /^seqr/) return "read " substr(w, 5) "MB"
	if (w == "ddw") return "dd write"
	if (w == "ddr") return "dd read"
	return w
}
BEGIN {
	n = split(labels, l, "\n")
	for (i = 1; i <= n; i++) {
		k = substr(l[i], 1, index(l[i], "=") - 1)
		lab[k] = substr(l[i], index(l[i], "=") + 1)
	}
}
NR == 1 { next }
{
	if (!($1 in seen)) { seen[$1] = 1; rows[++nr] = $1 }
	if (!($2 in wseen)) { wseen[$2] = 1; wls[++nw] = $2; mbs[$2] = ($5 != "") }
	val[$1, $2] = ($5 != "") ? $5 : $4
	cpu[$1, $2] = sprintf("%.2f", $6 + $7)
	if ($7 + 0 > 0) cpu[$1, $2] = cpu[$1, $2] " (" $7 ")"
}
function table(title, arr, unit,    r, w, line) {
	print title
	line = "| filesystem |"
	for (w = 1; w <= nw; w++) line = line " " head(wls[w]) (unit ? (mbs[wls[w]] ? " MB/s" : " s") : "") " |"
	print line
	line = "| --- |"
	for (w = 1; w <= nw; w++) line = line " ---: |"
	print line
	for (r = 1; r <= nr; r++) {
		line = "| " (rows[r] in lab ? lab[rows[r]] : rows[r]) " |"
		for (w = 1; w <= nw; w++) line = line " " ((rows[r], wls[w]) in arr ? arr[rows[r], wls[w]] : "-") " |"
		print line
	}
	print ""
}
END {
	table("Throughput (MB/s = 10^6 bytes/s) or time (s):", val, 1)
	table("CPU seconds, FUSE daemon + ptaskd (ptaskd's share in parentheses):", cpu, 0)
}
