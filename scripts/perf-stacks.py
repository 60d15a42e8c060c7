#!/usr/bin/env python3
# perf-stacks.py - read folded stacks (scripts/perf-fold.awk, gzipped or
# not): samples per thread, or for one function of one thread what it
# spends its samples in (callees) or who calls it (callers).
#
# Usage: perf-stacks.py FILE                      samples per thread
#        perf-stacks.py FILE THREAD FUNC [callees|callers] [DEPTH]
# THREAD is a thread name (pd-dev0, pd-ring, pd-complete...) or '*'.
# Percentages are of THREAD's samples; at perf record -F HZ a sample is
# 1/HZ s of CPU.
import collections
import gzip
import sys


class BadLine(Exception):
    pass


def stacks(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        for number, line in enumerate(f, 1):
            parts = line.rstrip('\n').rsplit(' ', 1)
            if len(parts) != 2 or not parts[1].isdigit():
                raise BadLine('%s:%d: not "STACK COUNT": %.60s' %
                              (path, number, line.rstrip('\n')))
            yield parts[0].split(';'), int(parts[1])


def main(argv):
    if len(argv) not in (2, 4, 5, 6):
        print('usage: perf-stacks.py FILE [THREAD FUNC [callees|callers] [DEPTH]]',
              file=sys.stderr)
        return 2
    path = argv[1]
    if len(argv) == 2:
        per = collections.Counter()
        for frames, n in stacks(path):
            per[frames[0]] += n
        total = sum(per.values())
        for name, n in per.most_common():
            print('%8d %5.1f%%  %s' % (n, 100.0 * n / total, name))
        return 0
    thread, func = argv[2], argv[3]
    mode = argv[4] if len(argv) > 4 else 'callees'
    depth = int(argv[5]) if len(argv) > 5 else 1
    if mode not in ('callees', 'callers') or depth < 1:
        print('perf-stacks.py: mode is callees or callers, depth >= 1',
              file=sys.stderr)
        return 2
    seen = collections.Counter()
    in_thread = 0
    for frames, n in stacks(path):
        if thread != '*' and frames[0] != thread:
            continue
        in_thread += n
        if func not in frames:
            continue
        i = frames.index(func)
        if mode == 'callees':
            key = ';'.join(frames[i + 1:i + 1 + depth]) or '<self>'
        else:
            key = ';'.join(frames[max(1, i - depth):i]) or '<root>'
        seen[key] += n
    print('%s: %d samples, %d with %s' % (thread, in_thread,
                                          sum(seen.values()), func))
    for key, n in seen.most_common(25):
        print('%8d %5.1f%%  %s' % (n, 100.0 * n / max(1, in_thread), key))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:
        sys.exit(0)
    except (BadLine, OSError) as e:
        print('perf-stacks.py: %s' % e, file=sys.stderr)
        sys.exit(1)
