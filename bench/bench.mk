# SPDX-License-Identifier: GPL-2.0
# bench/bench.mk - PTSched's experiments on the sim backend, included by the
# top-level Makefile (after daemon/Makefile.inc: it uses libptask.a).
#
#   bench-sim-progs  build/bin/ptsched_client (+ ptask_gpu, ptaskd)
#   bench-sim        deps, then bench/ptsched.sh all: PTask Table 3 and
#                    Figure 13 on the sim backend and the budgets' dispatch
#                    overhead; ends with foreground_ratio=, jain= and
#                    overhead_pct= lines (CSVs and PNGs in build/bench/ptsched)

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

bench-sim-progs: $(BN_B)/bin/ptsched_client $(PD_B)/bin/ptask_gpu $(PD_BIN) \
	$(TWIN_B)/bench.so $(PD_B)/gpu/bench_kernels.ptx

bench-sim:
	@$(MAKE) deps
	@$(MAKE) bench-sim-progs
	@bench/ptsched.sh all

.PHONY: bench-sim-progs bench-sim
