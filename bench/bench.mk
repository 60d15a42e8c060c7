# SPDX-License-Identifier: GPL-2.0
# bench/bench.mk - PTSched's experiments on the sim backend, included by the
# top-level Makefile (after daemon/Makefile.inc: it uses libptask.a).
#
#   bench-sim-progs  build/bin/ptsched_client (+ ptask_gpu, ptaskd)
#   bench-sim        deps, then bench/ptsched.sh all: PTask Table 3 and
#                    Figure 13 on the sim backend and the budgets' dispatch
#                    overhead; ends with foreground_ratio=, jain= and
#                    overhead_pct= lines (CSVs and PNGs in build/bench/ptsched)
#   bench-soak       deps, then bench/soak.py $(SOAK_ARGS): 64 clients with
#                    random graphs against ptaskd (cpu backend) for 10 min;
#                    ends with a "soak: PASS|FAIL ..." line (CSV, PNG and
#                    logs in build/bench/soak)
#   bench-fastpath-cpu, bench-fastpath-check, and build/bin/fastpath in
#                    bench-gpu-progs: the fast-path benchmark (below)

BN_B := build

$(BN_B)/bin/ptsched_client: bench/ptsched_client.c $(LIBPT_A)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(PD_CFLAGS) -o $@ $< $(LIBPT_A) -lpthread

# The benchmarks' host twins, bound to their PTX (bench/kernels.ptx)
TWIN_SOS += $(TWIN_B)/bench.so
BN_PTX_OBJ := $(BN_B)/obj/bench/kernels_ptx.o
$(BN_PTX_OBJ): bench/kernels_ptx.S $(PD_BENCH_PTX)
	@mkdir -p $(@D)
	@echo "  AS      $@"
	$(Q)$(CC) -c -DBENCH_PTX_FILE='"$(PD_BENCH_PTX)"' -o $@ $<

$(TWIN_B)/bench.so: bench/twin.c uapi/ptask_twin.h $(BN_PTX_OBJ)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(TWIN_CFLAGS) -o $@ $< $(BN_PTX_OBJ)

# The soak benchmark (bench/soak.py): its client, built against libptask.
$(BN_B)/bin/soak_client: bench/soak_client.c bench/soak.h tests/twins/test_code.h $(LIBPT_A)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(PD_CFLAGS) -o $@ $< $(LIBPT_A) -lpthread

# What a shared graph's own arenas cost a round (Documentation/ptaskd.md).
$(BN_B)/bin/shared_cost: bench/shared_cost.c tests/twins/test_code.h $(LIBPT_A)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(PD_CFLAGS) -o $@ $< $(LIBPT_A) -lpthread

bench-soak-progs: $(BN_B)/bin/shared_cost
bench-soak-progs: $(BN_B)/bin/soak_client $(PD_BIN) $(PD_B)/bin/ptaskctl $(TWIN_SOS)
# a short run of it is in check-daemon (tests/daemon/soak_test.sh)
daemon-tests: $(BN_B)/bin/soak_client $(BN_B)/bin/shared_cost

# SOAK_ARGS: bench/soak.py's options (default: 64 clients, 600 s, cpu).
bench-soak:
	@$(MAKE) deps
	@$(MAKE) bench-soak-progs
	@# the python3 with matplotlib (the plot), else any (no plot)
	@py=python3; for p in python3 /usr/bin/python3; do \
		if $$p -c 'import matplotlib' 2>/dev/null; then py=$$p; break; fi; \
	done; $$py bench/soak.py $(SOAK_ARGS)

.PHONY: bench-soak-progs bench-soak

bench-sim-progs: $(BN_B)/bin/ptsched_client $(PD_B)/bin/ptask_gpu $(PD_BIN) \
	$(TWIN_B)/bench.so $(PD_B)/gpu/bench_kernels.ptx

bench-sim:
	@$(MAKE) deps
	@$(MAKE) bench-sim-progs
	@bench/ptsched.sh all

.PHONY: bench-sim-progs bench-sim

# --- the fast-path benchmark of issue 12 (bench/fastpath*.c) ---------------
#   build/bin/fastpath     libptask (the ptask side) + the CUDA shim (the raw
#                          baselines, loaded at run time); built by
#                          bench-gpu-progs with the other GPU benchmarks
#   bench-fastpath-cpu     no GPU: ptaskd --backend cpu (the kernels' host
#                          twins) against a UNIX-socket ping-pong, here
#   bench-fastpath-check   its options: every bad one refused with a message
# On the GPU machine: bench/fastpath-run.sh (its header says what to carry).
BN_FP_SRCS := $(sort $(wildcard bench/fastpath*.c))
BN_FP_BIN := $(BN_B)/bin/fastpath

$(BN_FP_BIN): $(BN_FP_SRCS) bench/fastpath.h bench/read_ptx.h $(LIBPT_A) $(PC_A)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(PD_CFLAGS) -o $@ $(BN_FP_SRCS) $(LIBPT_A) $(PC_A) -ldl -lpthread

bench-gpu-progs: $(BN_FP_BIN)

bench-fastpath-progs: $(BN_FP_BIN) $(PD_BIN) $(TWIN_B)/bench.so \
	$(PD_B)/gpu/bench_kernels.ptx

bench-fastpath-cpu: bench-fastpath-progs
	@bench/fastpath-run.sh --backend cpu

bench-fastpath-check: $(BN_FP_BIN) $(PD_B)/gpu/bench_kernels.ptx
	@bench/fastpath-args-test.sh

# make check-daemon runs it too (tests/daemon/fastpath_args_test.sh)
daemon-tests: $(BN_FP_BIN) $(PD_B)/gpu/bench_kernels.ptx

.PHONY: bench-fastpath-progs bench-fastpath-cpu bench-fastpath-check
