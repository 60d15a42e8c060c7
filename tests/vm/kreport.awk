# tests/vm/kreport.awk - find the kernel's reports in a guest's console log
# and tie each to the program that was running.
#
# Usage: awk -f tests/vm/kreport.awk build/vm/check.log
#
# Prints one line per report line, "WHO<TAB>TEXT", where WHO is a program
# name, "insmod <module>", "rmmod <module>", "boot" (before /init cleared
# the boot log) or "outside any test", and TEXT the report's line.
#
# Reads the sections tests/vm/init.sh prints:
#   BOOT-DMESG-BEGIN..END  the kernel log up to /init: every report is "boot"
#   DMESG-BEGIN..END       the kernel log from then on, with the markers
#                          "ptask-test: begin NAME [jiffies=J]" and
#                          "ptask-test: end NAME rc=N [jiffies=J]": a report
#                          goes to the NAME whose markers enclose it
#   KMEMLEAK-BEGIN..END    /sys/kernel/debug/kmemleak: each unreferenced
#                          object goes to the NAME whose markers' jiffies
#                          enclose the object's allocation jiffies
# When the guest died before printing its dmesg (a panic), the console
# itself is searched: the kernel printed its errors there live, between
# the "@@PTASK-VM@@ BEGIN NAME" / "END NAME" lines of /init.
#
# A report line is any line matching `bad` below, less kmemleak's notices
# and the kernel command line (`benign`).

BEGIN {
	m = "@@PTASK-VM@@"
	bad = "BUG:|kernel BUG at|WARNING:|Oops|UBSAN:|KASAN:|general protection|" \
		"refcount_t|list_(add|del) corruption|corruption|" \
		"possible circular locking|possible recursive locking|" \
		"inconsistent lock state|sleeping function called from invalid context|" \
		"INFO: task .* blocked for more than|INFO: trying to register non-static key|" \
		"detected stalls?|soft lockup|hard LOCKUP|Kernel panic|Call Trace:|[Ll]eak|" \
		"^(Read|Write) of size [0-9]+ at addr"
	benign = "^kmemleak: (Kernel memory leak detector initialized|" \
		"Automatic memory scanning thread (started|ended)|" \
		"[0-9]+ new suspected memory leaks)|^(Kernel )?[Cc]ommand line: "
	sec = ""
	nwin = 0
	had_dmesg = 0
}

# emit(WHO, TEXT): one report line.  A "Call Trace:" within 200 lines of
# the previous report line belongs to that report and is not repeated.
function emit(who, text) {
	if (text ~ /Call Trace:/ && last_nr && NR - last_nr < 200)
		return
	last_nr = NR
	printf "%s\t%s\n", who, text
}

# strip_ts(LINE): the text after the "[ 12.345678] " timestamp, if any.
function strip_ts(line) {
	sub(/^\[ *[0-9]+\.[0-9]+\] /, "", line)
	return line
}

function is_report(text) {
	return text ~ bad && text !~ benign
}

# The jiffies=J field of a marker, or "" when absent.
function marker_jiffies(text,    i, n, f) {
	n = split(text, f, " ")
	for (i = 1; i <= n; i++)
		if (f[i] ~ /^jiffies=[0-9]+$/)
			return substr(f[i], 9)
	return ""
}

# The NAME of a "ptask-test: begin|end NAME ..." marker: the words after
# begin/end, up to rc= or jiffies=.
function marker_name(text,    i, n, f, name) {
	n = split(text, f, " ")
	name = ""
	for (i = 3; i <= n; i++) {
		if (f[i] ~ /^(rc|jiffies)=/)
			break
		name = name (name == "" ? "" : " ") f[i]
	}
	return name
}

# Jiffies windows of the programs, for kmemleak.  Compared as numbers:
# 64-bit jiffies fit awk's doubles exactly well past 2^32.
function window_of(j,    i) {
	for (i = 1; i <= nwin; i++)
		if (wstart[i] != "" && wend[i] != "" && j + 0 >= wstart[i] + 0 && j + 0 <= wend[i] + 0)
			return wname[i]
	return "outside any test"
}

# Objects are kept until the end: the dmesg section, with the windows,
# comes after the kmemleak ones.
function leak_flush() {
	if (leak_obj == "")
		return
	nleak++
	leak_j[nleak] = leak_jiffies
	leak_text[nleak] = "kmemleak (" leak_when "): unreferenced object " leak_obj \
		" allocated by \"" leak_comm "\"" (leak_trace == "" ? "" : " at" leak_trace)
	leak_obj = ""
}

$1 == m && $2 == "BOOT-DMESG-BEGIN" { sec = "boot"; next }
$1 == m && $2 == "BOOT-DMESG-END" { sec = ""; next }
$1 == m && $2 == "DMESG-BEGIN" { sec = "dmesg"; had_dmesg = 1; cur = ""; next }
$1 == m && $2 == "DMESG-END" { sec = ""; next }
$1 == m && $2 == "KMEMLEAK-BEGIN" {
	sec = "kmemleak"; leak_when = $3; leak_obj = ""
	next
}
$1 == m && $2 == "KMEMLEAK-END" { leak_flush(); sec = ""; next }

sec == "boot" {
	text = strip_ts($0)
	if (is_report(text))
		emit("boot", text)
	next
}

sec == "dmesg" {
	text = strip_ts($0)
	if (text ~ /^ptask-test: begin /) {
		cur = marker_name(text)
		nwin++
		wname[nwin] = cur
		wstart[nwin] = marker_jiffies(text)
		wend[nwin] = ""
		next
	}
	if (text ~ /^ptask-test: end /) {
		if (nwin > 0 && wname[nwin] == marker_name(text))
			wend[nwin] = marker_jiffies(text)
		cur = ""
		next
	}
	if (is_report(text))
		emit(cur == "" ? "outside any test" : cur, text)
	next
}

sec == "kmemleak" {
	if ($1 == "unreferenced" && $2 == "object") {
		leak_flush()
		leak_obj = $3 " " $4 " " $5
		sub(/:$/, "", leak_obj)
		leak_comm = ""; leak_jiffies = ""; leak_trace = ""; leak_frames = 0
		next
	}
	if ($1 == "comm" && leak_obj != "") {
		line = $0
		if (match(line, /comm "[^"]*"/))
			leak_comm = substr(line, RSTART + 6, RLENGTH - 7)
		if (match(line, /jiffies [0-9]+/))
			leak_jiffies = substr(line, RSTART + 8, RLENGTH - 8)
		next
	}
	# Backtrace lines: "[<ffffffff81234567>] func+0x12/0x34 [mod]"; the
	# allocator's own frames say nothing about who leaked.
	if ($1 ~ /^\[<.*>\]$/ && leak_obj != "" && leak_frames < 4) {
		fn = $2
		if (fn ~ /^(kmemleak_|__kmem_cache_alloc|kmem_cache_alloc|__kmalloc|kmalloc|kzalloc|kvmalloc|__kvmalloc|slab_|__alloc|alloc_pages|__vmalloc|vmalloc|vzalloc|kmalloc_trace|kmalloc_node|__kmalloc_node)/)
			next
		leak_trace = leak_trace (leak_trace == "" ? " " : " < ") fn ($3 ~ /^\[/ ? " " $3 : "")
		leak_frames++
	}
	next
}

# The live console: only used when no dmesg section came.
{
	if ($1 == m && $2 == "BEGIN") { ccur = $3; next }
	if ($1 == m && $2 == "END") { ccur = ""; next }
	if ($1 == m)
		next
	if ($0 ~ /^\[ *[0-9]+\.[0-9]+\] / && is_report(strip_ts($0)))
		console[++ncon] = (ccur == "" ? "outside any test" : ccur) "\t" strip_ts($0)
}

END {
	leak_flush()
	if (!had_dmesg)
		for (i = 1; i <= ncon; i++)
			print console[i]
	for (i = 1; i <= nleak; i++)
		printf "%s\t%s\n", leak_j[i] == "" ? "outside any test" : window_of(leak_j[i]), leak_text[i]
}
