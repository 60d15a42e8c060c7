# SPDX-License-Identifier: GPL-2.0
# tests/e2e/e2e.mk - ptaskd end to end through libptask (ptaskd_e2e.c),
# one source over both transports, built twice; included by the top-level
# Makefile after daemon/Makefile.inc:
#
#   build/tests/daemon/ptaskd_e2e   for the host: dynamic, ASan and UBSan;
#                  tests/daemon/run.sh runs it (make check-daemon): the
#                  user-mode variants run, the kernel-mode one SKIPs
#                  without /dev/ptask; its ptaskd is build/bin/ptaskd
#   build/vm/ptaskd_e2e             for the test guest: static; the
#                  Makefile's VM_DAEMON_PROGS runs it (make check-vm): every
#                  variant runs, with the guest's /bin/ptaskd
#                  (build/vm/ptaskd, twins linked in)
#
# Both link the kselftest library (tests/kselftest: the harness, sysfs
# readers), libptask.a and the common library, and carry the gemm
# example's and the benchmarks' PTX: the code their twins are bound to.

E2E_SRCS := $(sort $(wildcard tests/e2e/*.c))
E2E_DEPS := $(E2E_SRCS) $(wildcard tests/e2e/*.h) tests/twins/test_code.h \
	$(KSFT_DEPS) $(LIBPT_A) $(PC_A) \
	$(B)/obj/examples/gemm/gemm_ptx.o $(B)/obj/bench/kernels_ptx.o
E2E_LINK = $(filter %.c %.o,$^) $(LIBPT_A) $(PC_A)
E2E_FLAGS := -Iuapi -Ilibptask $(NL_CFLAGS)

$(B)/tests/daemon/ptaskd_e2e: $(E2E_DEPS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(CFLAGS) $(E2E_FLAGS) -fsanitize=address,undefined \
		-fno-omit-frame-pointer -DE2E_PTASKD='"build/bin/ptaskd"' -o $@ \
		$(E2E_LINK) $(NL_LIBS)

$(B)/vm/ptaskd_e2e: $(E2E_DEPS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@ (static)"
	$(Q)$(CC) $(STATIC_CFLAGS) $(E2E_FLAGS) -DE2E_PTASKD='"/bin/ptaskd"' \
		-o $@ $(E2E_LINK) $(NL_LIBS) $(NL_QUIET)

daemon-tests: $(B)/tests/daemon/ptaskd_e2e

# Rings against the path without them, one small invocation (a helper,
# not a test: not in build/tests/daemon/), one source for both modes (see
# tests/daemon/ring_roundtrip.c): for the host (user mode), and static
# for the guest (--kernel; carried in by tests/vm/run.sh bench).
RT_SRC := tests/daemon/ring_roundtrip.c
RT_DEPS := $(RT_SRC) bench/read_ptx.h libptask/libptask.h $(LIBPT_A) $(PC_A)

$(B)/tests/helpers/ring_roundtrip: $(RT_DEPS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(CFLAGS) $(E2E_FLAGS) -o $@ $(RT_SRC) $(LIBPT_A) $(PC_A) -lpthread

$(B)/vm/ring_roundtrip: $(RT_DEPS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@ (static)"
	$(Q)$(CC) $(STATIC_CFLAGS) $(E2E_FLAGS) -o $@ $(RT_SRC) $(LIBPT_A) \
		$(PC_A) -lpthread $(NL_QUIET)

daemon-tests: $(B)/tests/helpers/ring_roundtrip
bench-progs: $(B)/vm/ring_roundtrip
