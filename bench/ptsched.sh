#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# ptsched.sh - PTSched's experiments (issue 4), run against ptaskd in user
# mode: on the sim backend here and in CI, on cuda on the GPU machine.
#
#   bench/ptsched.sh table3    PTask Table 3: a nice -20 client of short GPU
#                              work (1 ms kernels, 0.1 ms of host work between
#                              them) alone, then against one and two nice +19
#                              clients looping 19 ms kernels; budgets off and
#                              on.  Ends "foreground_ratio=<x>": throughput
#                              with two hogs and budgets on over alone (with
#                              BUDGETS=off: budgets off, the inversion).
#   bench/ptsched.sh fig13     PTask Figure 13: four GPU-bound clients at nice
#                              0, 5, 10 and 15; GPU share against weight
#                              share.  Ends "jain=<x>": Jain's index over the
#                              shares divided by the weight shares (budgets
#                              on; BUDGETS=off for the contrast).
#   bench/ptsched.sh overhead  the dispatch benchmark (bench/ptask_gpu.c)
#                              with budgets on against off, interleaved
#                              OVERHEAD_ROUNDS (3) times, a fresh daemon
#                              each; the medians' ratio, "overhead_pct=<x>".
#   bench/ptsched.sh all       the three (make bench-sim)
#   bench/ptsched.sh plot      redraw the PNGs from the CSVs in $OUT
#
# Environment: BACKEND (sim; cuda on a GPU machine), SECONDS_PER_RUN (4),
# OVERHEAD_ROUNDS (3),
# FIG13_SECONDS (10), OUT (build/bench/ptsched: CSVs, PNGs, logs),
# PTX (the PTX of bench/kernels.cu: bench/kernels.ptx, which the sim and
# cpu backends' twins in build/twins/bench.so are bound to),
# BUDGETS (on|off: only that setting in table3/fig13).
# Needs root (nice -20).  Prints progress on stderr, results on stdout.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
backend=${BACKEND:-sim}
secs=${SECONDS_PER_RUN:-4}
fig_secs=${FIG13_SECONDS:-10}
out=${OUT:-$root/build/bench/ptsched}
ptx=${PTX:-$root/bench/kernels.ptx}
only=${BUDGETS:-}
mkdir -p "$out"
tmp=$(mktemp -d)
daemon_pid=

say() { printf 'ptsched: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

cleanup() {
	stop_daemon
	rm -rf "$tmp"
}
trap cleanup EXIT

[ "${1:-}" = plot ] || [ "$(id -u)" = 0 ] ||
	die "needs root: the foreground client runs at nice -20"
for p in ptaskd ptsched_client; do
	[ -x "$bin/$p" ] || die "no $bin/$p: run 'make ptaskd bench-sim-progs'"
done

start_daemon() { # budgets on|off
	local sim=()

	[ "$backend" = sim ] && sim=(--sim-config "devices=1")
	"$bin/ptaskd" --mode user --backend "$backend" "${sim[@]}" \
		--socket "$tmp/sock" --budgets "$1" --host-kernels "$root/build/twins" \
		>"$tmp/ptaskd.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 100); do
		[ -S "$tmp/sock" ] && return 0
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$tmp/ptaskd.log" >&2
	die "ptaskd did not start"
}

stop_daemon() {
	[ -n "$daemon_pid" ] || return 0
	kill -TERM "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=
	rm -f "$tmp/sock"
}

# One client over the shared window [from, until] (CLOCK_REALTIME s).
client() { # label nice kernel_us gap_us from until
	PTASK_MODE=user PTASK_SOCKET=$tmp/sock "$bin/ptsched_client" \
		--label "$1" --nice "$2" --kernel-us "$3" --gap-us "$4" \
		--from "$5" --until "$6" --ptx "$ptx"
}

# A window starting @1 s from now and lasting @2 s: "from until".
window() {
	awk -v d="$1" -v s="$2" -v now="$(date +%s.%N)" \
		'BEGIN { printf "%.3f %.3f\n", now + d, now + d + s }'
}

field() { # line key
	sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" <<<" $1"
}

# One Table 3 cell: the foreground's rounds/s with @hogs nice +19 hogs.
table3_cell() { # budgets hogs
	local i pids=() line from until

	start_daemon "$1"
	# The hogs start first; everyone is measured over the same window.
	read -r from until < <(window 1 "$secs")
	for ((i = 0; i < $2; i++)); do
		client "hog$i" 19 19000 0 "$from" "$until" >"$tmp/hog$i.out" &
		pids+=($!)
	done
	[ "$2" = 0 ] || sleep 0.3
	line=$(client fg -20 1000 100 "$from" "$until")
	for pid in "${pids[@]}"; do
		wait "$pid" || die "a hog failed: $(cat "$tmp"/hog*.out)"
	done
	stop_daemon
	# The hogs' rounds/s, summed, after the foreground's fields.
	echo "$line hogs_rate=$(cat /dev/null "$tmp"/hog*.out 2>/dev/null |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^rate=/) s += substr($i, 6) }
		     END { printf "%.2f", s }')"
	rm -f "$tmp"/hog*.out
}

table3() {
	local b h line rate alone p50 p99 hr ratio settings=(off on)
	local csv=$out/table3.csv

	[ -n "$only" ] && settings=("$only")
	echo "budgets,hogs,fg_rate,fg_ratio,fg_p50_ms,fg_p99_ms,hogs_rate" >"$csv"
	printf '%-8s %-5s %12s %9s %10s %10s %14s\n' budgets hogs "fg rounds/s" \
		"vs alone" "p50 ms" "p99 ms" "hogs rounds/s"
	for b in "${settings[@]}"; do
		alone=
		for h in 0 1 2; do
			say "table3: budgets $b, $h hog(s), ${secs} s"
			line=$(table3_cell "$b" "$h")
			rate=$(field "$line" rate)
			p50=$(field "$line" p50_ms)
			p99=$(field "$line" p99_ms)
			[ -n "$alone" ] || alone=$rate
			ratio=$(awk -v r="$rate" -v a="$alone" 'BEGIN { printf "%.3f", r / a }')
			hr=$(field "$line" hogs_rate)
			printf '%-8s %-5s %12s %9s %10s %10s %14s\n' "$b" "$h" "$rate" \
				"$ratio" "$p50" "$p99" "$hr"
			echo "$b,$h,$rate,$ratio,$p50,$p99,$hr" >>"$csv"
			eval "ratio_${b}_$h=$ratio"
		done
	done
	plot_table3 "$csv"
	if [ -z "$only" ]; then
		echo "foreground_ratio_budgets_off=$ratio_off_2"
		echo "foreground_ratio=$ratio_on_2"
	else
		eval "echo foreground_ratio=\$ratio_${only}_2"
	fi
}

# Jain's index and the table of one Figure 13 run.
fig13_run() { # budgets
	local nices=(0 5 10 15) i pids=() from until

	start_daemon "$1"
	read -r from until < <(window 1 "$fig_secs")
	for i in 0 1 2 3; do
		client "nice${nices[$i]}" "${nices[$i]}" 2000 0 "$from" "$until" \
			>"$tmp/fig$i.out" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || die "a fig13 client failed: $(cat "$tmp"/fig*.out)"
	done
	stop_daemon
	cat "$tmp"/fig0.out "$tmp"/fig1.out "$tmp"/fig2.out "$tmp"/fig3.out
}

fig13() {
	local b settings=(off on) csv=$out/fig13.csv jain

	[ -n "$only" ] && settings=("$only")
	echo "budgets,nice,weight,weight_share,gpu_share,normalized" >"$csv"
	for b in "${settings[@]}"; do
		say "fig13: budgets $b, four clients for ${fig_secs} s"
		fig13_run "$b" | awk -v b="$b" -v csv="$csv" '
			{
				for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
				nice[NR] = f["nice"]; rate[NR] = f["rate"]
			}
			END {
				w[0] = 1024; w[5] = 335; w[10] = 110; w[15] = 36
				for (i = 1; i <= NR; i++) { sr += rate[i]; sw += w[nice[i]] }
				printf "%-8s %5s %7s %12s %10s %10s\n", "budgets", "nice", "weight", "weight share", "GPU share", "share/w"
				for (i = 1; i <= NR; i++) {
					ws = w[nice[i]] / sw; gs = rate[i] / sr; x = gs / ws
					s1 += x; s2 += x * x
					printf "%-8s %5s %7d %12.4f %10.4f %10.3f\n", b, nice[i], w[nice[i]], ws, gs, x
					printf "%s,%s,%d,%.5f,%.5f,%.4f\n", b, nice[i], w[nice[i]], ws, gs, x >> csv
				}
				printf "jain_%s=%.4f\n", b, s1 * s1 / (NR * s2)
			}'
	done | tee "$tmp/fig13.txt"
	plot_fig13 "$csv"
	jain=$(sed -n "s/^jain_${settings[-1]}=//p" "$tmp/fig13.txt")
	echo "jain=$jain"
}

overhead() {
	local b i line d ob=cpu code=$ptx med_on med_off pct
	local rounds=${OVERHEAD_ROUNDS:-3}
	local -a on=() off=()

	[ "$backend" = cuda ] && ob=cuda
	[ -x "$bin/ptask_gpu" ] || die "no $bin/ptask_gpu: run 'make bench-sim-progs'"
	for ((i = 1; i <= rounds; i++)); do
		for b in on off; do
			say "overhead: budgets $b, round $i (backend $ob)"
			backend_saved=$backend
			backend=$ob
			start_daemon "$b"
			line=$(PTASK_MODE=user PTASK_SOCKET=$tmp/sock "$bin/ptask_gpu" \
				--ptx "$code" --iters 3000 --transfer-mib 1 | grep '^dispatch_us=')
			stop_daemon
			backend=$backend_saved
			d=${line#dispatch_us=}
			if [ "$b" = on ]; then on+=("$d"); else off+=("$d"); fi
		done
	done
	med_on=$(printf '%s\n' "${on[@]}" | sort -g | sed -n "$(((rounds + 1) / 2))p")
	med_off=$(printf '%s\n' "${off[@]}" | sort -g | sed -n "$(((rounds + 1) / 2))p")
	pct=$(awk -v a="$med_on" -v b="$med_off" 'BEGIN { printf "%.2f", (a / b - 1) * 100 }')
	printf 'dispatch_us budgets on:  %s (runs: %s)\n' "$med_on" "${on[*]}"
	printf 'dispatch_us budgets off: %s (runs: %s)\n' "$med_off" "${off[*]}"
	echo "budgets_on,$med_on" >"$out/overhead.csv"
	echo "budgets_off,$med_off" >>"$out/overhead.csv"
	echo "overhead_pct=$pct"
}

plot_table3() { # csv
	command -v gnuplot >/dev/null || { say "no gnuplot: no table3.png"; return 0; }
	gnuplot <<-GP
	set terminal pngcairo size 800,480
	set output "$out/table3.png"
	set datafile separator ","
	set title "PTask Table 3 ($backend): nice -20 client, 1 ms kernels, vs nice +19 hogs, 19 ms"
	set ylabel "foreground rounds/s"
	set xlabel "GPU-bound hogs at nice +19"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set yrange [0:*]
	set key top right
	plot "< grep '^off' $1" using 3:xtic(2) title "budgets off", \
	     "< grep '^on' $1" using 3:xtic(2) title "budgets on"
	GP
	say "wrote $out/table3.png"
}

plot_fig13() { # csv
	command -v gnuplot >/dev/null || { say "no gnuplot: no fig13.png"; return 0; }
	gnuplot <<-GP
	set terminal pngcairo size 800,480
	set output "$out/fig13.png"
	set datafile separator ","
	set title "PTSched, PTask Figure 13 ($backend backend): GPU share against weight share"
	set xlabel "weight share (CFS weight of nice 0, 5, 10, 15)"
	set ylabel "measured GPU share"
	set xrange [0:0.8]
	set yrange [0:0.8]
	set key top left
	plot x title "proportional" with lines dt 2, \
	     "< grep '^off' $1" using 4:5 title "budgets off" with points pt 7 ps 1.5, \
	     "< grep '^on' $1" using 4:5 title "budgets on" with points pt 5 ps 1.5
	GP
	say "wrote $out/fig13.png"
}

case "${1:-}" in
table3) table3 ;;
fig13) fig13 ;;
overhead) overhead ;;
plot)
	# Redraw the PNGs from the CSVs in $OUT (a run copied back from a
	# machine without gnuplot).
	plot_table3 "$out/table3.csv"
	plot_fig13 "$out/fig13.csv"
	;;
all)
	# The two goal lines last, as the issue asks of make bench-sim.
	overhead | tee "$tmp/overhead.txt"
	table3 | tee "$tmp/table3.txt"
	fig13 | tee "$tmp/fig13.txt"
	grep '^overhead_pct=' "$tmp/overhead.txt"
	grep '^foreground_ratio=' "$tmp/table3.txt"
	grep '^jain=' "$tmp/fig13.txt"
	;;
*)
	sed -n '3,30p' "$0" >&2
	exit 2
	;;
esac
