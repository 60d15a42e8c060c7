# SPDX-License-Identifier: GPL-2.0
# ptask - top-level build.  A newcomer needs two commands:
#
#   make demo     install what is missing, build, run the gesture pipeline
#                 demo (examples/gesture/demo.sh: table and PNG in build/demo)
#   make check    install what is missing, then every test; the last line
#                 is "N passed, M failed, K skipped"
#
# Targets:
#   all (default)  the module (kmod/ptask.ko), the user-space programs and
#                  the twin libraries (build/twins/*.so, `make twins`)
#   deps           install packages (scripts/deps.sh; idempotent, fast)
#   module         kmod/ptask.ko against $(KDIR) (skipped without kmod/Kbuild)
#   kselftest      build/kselftest/<name> for tests/kselftest/*_test.c
#                  (+ build/kselftest/test_executor), static
#   examples       build/bin/ioctl-raw, the raw-ioctl example, static (it
#                  runs in the guest; examples/examples.mk builds it)
#   bench-progs    build/bench/<name> for bench/*.c, static
#   check-unit     unit tests + fuzz smoke runs, user space (tests/unit/unit.mk
#                  builds them incrementally, scripts/run-unit.sh runs them)
#   check-daemon   ptaskd and libptask in user mode (daemon/Makefile.inc)
#   check-vm       the kselftests and ptaskd's VM tests in a QEMU guest,
#                  once on each kernel of KERNEL (stock, debug, or both,
#                  the default):
#                  check-vm-stock boots Debian's kernel, check-vm-debug the
#                  debug kernel (KASAN, UBSAN, lockdep, kmemleak; built from
#                  linux-source once per machine and cached, see
#                  tests/vm/debug-kernel.sh); `make check-vm KERNEL=stock`
#                  runs one.  Ends with the total of both
#   debug-kernel   build (or find in its cache) the debug kernel
#   module-debug   ptask.ko against the debug kernel, in build/kmod-debug/
#   check-encfs, check-gesture, check-deb  encfs-gpu, the gesture demo, the
#                  Debian packages (their own fragments)
#   check          deps, then every part in CHECK_PARTS, then the total
#   T=NAME[,...]   with check-unit, check-daemon, check-vm: only those tests
#   demo           deps, then the gesture pipeline demo (demo-gesture, in
#                  examples/gesture/gesture.mk)
#   demo-vm        $(DEMO_PROG) $(DEMO_ARGS) in the guest (tests/vm/run.sh
#                  demo): ioctl-raw's gemm chain, run by the guest's ptaskd
#   bench          deps, then $(BENCH_PROGS) in the guest (tests/vm/run.sh bench)
#   install        libptask, ptaskd, ptaskctl, encfs-gpu, twin libraries,
#                  headers, man pages, unit into $(DESTDIR)$(PREFIX);
#                  uninstall (install.mk)
#   deb            the Debian packages in build/deb (debian/deb.mk; also
#                  deps-deb, lint-deb, check-deb)
#   checkpatch     checkpatch.pl --strict on kmod/ and core/
#   sparse         the module built with sparse (C=2); fails on any warning
#   check-kernels  the module built against newer Debian kernel headers
#                  (downloaded to build/compat/; not in `make check`)
#   dkms-install   the module's source under DKMS (/usr/src/ptask-<ver>),
#                  built and installed for $(KVER); dkms-uninstall undoes it
#   check-dkms     dkms-install and -uninstall in scratch trees (build/)
#   clean          remove build/ and the module's build outputs
#
# All outputs go under build/, except what Kbuild writes next to the module's
# sources (kmod/*.o, kmod/ptask.ko, and core/*.o through the kmod/core link).
# Programs that run in the guest are linked statically (the guest has only
# busybox).  Every target but deps, check, demo and bench assumes `make deps`
# has run once on the machine.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DEFAULT_GOAL := all
MAKEFLAGS += --no-print-directory

KVER ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
B := build
# V=1 shows the full compiler command lines (here and in Kbuild).
Q := $(if $(V),,@)

ifeq ($(origin CC),default)
CC := gcc
endif
# One set of warning flags for all user-space code: every part's flags
# start from it (scripts get it as $PTASK_WARN_FLAGS).
WARN_FLAGS := -Wall -Wextra -Werror
export PTASK_WARN_FLAGS := $(WARN_FLAGS)
comma := ,
CFLAGS := -std=gnu11 -O2 -g $(WARN_FLAGS) -I.
NL_CFLAGS := $(or $(strip $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)),-I/usr/include/libnl3)
NL_LIBS := -lnl-genl-3 -lnl-3 -lpthread
STATIC_CFLAGS = $(CFLAGS) $(NL_CFLAGS) -static
# Static glibc warns about getaddrinfo() & co. inside libnl, which nothing
# here calls, and about dlopen() in ptaskd's CUDA and twin loaders, which
# the guest's static ptaskd never reaches (sim backend, twins linked in);
# drop those two-line warnings (a test's own are kept).
NL_QUIET := 2>&1 | { grep -vE "libnl_3_la-|in function .(pc_cuda_load|load_one).:|warning: Using '(getaddrinfo|gethostbyname|getprotobyname|getprotobynumber|dlopen)'" || true; }

# The internal plumbing library (build/lib/libptask-common.a: netlink
# client, message framing, CUDA shim, hash table), linked by almost every
# program below: its fragment comes first.
include common/common.mk

# Twin libraries (uapi/ptask_twin.h): the CPU stand-ins of GPU kernels that
# ptaskd's cpu and sim backends load.  Each part that ships GPU kernels
# builds its own as $(TWIN_B)/<name>.so and adds it to TWIN_SOS.
TWIN_B := $(B)/twins
TWIN_CFLAGS := -std=gnu11 -O2 -g $(WARN_FLAGS) -I. -fPIC -shared -fvisibility=hidden \
	-Wl,-z,defs -Wl,-z,noexecstack
TWIN_SOS :=

# --- discovery --------------------------------------------------------------
# tests/kselftest: every *_test.c is a test program; test_executor.c is the
# executor the tests start themselves (copied into the guest, not run as a
# test); every other .c there is a shared helper linked into all of them.
KSFT_DIR := tests/kselftest
KSFT_TESTS := $(sort $(wildcard $(KSFT_DIR)/*_test.c))
KSFT_EXEC_SRC := $(wildcard $(KSFT_DIR)/test_executor.c)
KSFT_LIB := $(filter-out %_test.c $(KSFT_EXEC_SRC),$(wildcard $(KSFT_DIR)/*.c))
KSFT_DEPS := $(KSFT_LIB) $(wildcard $(KSFT_DIR)/*.h common/*.h) uapi/ptask.h $(PC_A)
KSFT_BINS := $(KSFT_TESTS:$(KSFT_DIR)/%.c=$(B)/kselftest/%)
KSFT_EXEC := $(KSFT_EXEC_SRC:$(KSFT_DIR)/%.c=$(B)/kselftest/%)

# The one raw-ioctl example (examples/ioctl-raw; its rule is in
# examples/examples.mk), static, so it runs in the guest.
EXAMPLE_BINS := $(B)/bin/ioctl-raw
# Benchmarks that run in the guest (kernel mode, static); the GPU ones are
# built by daemon/Makefile.inc and tests/gpu/gpu.mk.
BENCH_BINS := $(B)/bench/roundtrip

MODULE := kmod/ptask.ko
DEMO_PROG ?= $(B)/bin/ioctl-raw
# In the guest: ptaskd (sim backend; the gemm example's twin is linked
# into the guest's static ptaskd) registers as the executor for the run.
DEMO_ARGS ?= --n 64 --iters 3 --executor /bin/ptaskd -- --mode kernel --backend sim
BENCH_PROGS ?= $(BENCH_BINS)
# More static programs to copy into the guest's /bin without running them.
VM_HELPERS ?=
# The kernels `make check-vm` (and `make check`) boots the VM tests on:
# stock (Debian's), debug (tests/vm/debug.config) or both.
KERNEL ?= both
VM_KERNELS := $(if $(filter both,$(KERNEL)),stock debug,$(filter stock debug,$(KERNEL)))
ifneq ($(filter-out stock debug both,$(KERNEL)),)
$(error KERNEL='$(KERNEL)': name stock, debug or both)
endif
DEBUG_KMOD := $(B)/kmod-debug
DEBUG_MODULE := $(DEBUG_KMOD)/kmod/ptask.ko
# The parts of `make check`, in order; each ends with an "N passed, ..." line.
CHECK_PARTS := check-unit checkpatch sparse check-daemon \
	$(addprefix check-vm-,$(VM_KERNELS)) check-encfs check-gesture check-deb

.PHONY: all deps module kselftest examples bench-progs check check-unit \
	check-vm check-vm-stock check-vm-debug check-vm-progs debug-kernel \
	module-debug demo demo-vm bench bench-vm checkpatch sparse clean kernel-ok \
	check-kernels check-dkms

all: module kselftest examples bench-progs encfs-gpu libptask ptaskd ptaskctl gemm ioctl-raw twins

deps:
	@scripts/deps.sh

kernel-ok:
	@if [ -z "$(KVER)" ] || [ ! -f "$(KDIR)/Makefile" ]; then \
		echo "make: no kernel headers at '$(KDIR)' (KVER='$(KVER)'); run 'make deps'" >&2; \
		exit 1; \
	fi

module: kernel-ok
	@if [ -f kmod/Kbuild ]; then \
		echo "make: building $(MODULE) against $(KDIR)"; \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod modules; \
	else \
		echo "make: kmod/Kbuild does not exist yet; skipping the module"; \
	fi

# --- static programs for the guest -----------------------------------------
kselftest: $(KSFT_BINS) $(KSFT_EXEC)

$(B)/kselftest/%: $(KSFT_DIR)/%.c $(KSFT_DEPS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(STATIC_CFLAGS) -o $@ $< $(KSFT_LIB) $(PC_A) $(NL_LIBS) $(NL_QUIET)

examples: $(EXAMPLE_BINS)

bench-progs: $(BENCH_BINS)

$(B)/bench/%: bench/%.c uapi/ptask.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(STATIC_CFLAGS) -o $@ $< $(NL_LIBS) $(NL_QUIET)

# --- tests -----------------------------------------------------------------
# ptaskd in the guest: the kernel-mode source alone, and ptaskd end to end
# (tests/e2e/e2e.mk builds it; in the guest all its variants run).
VM_DAEMON_PROGS := $(B)/vm/source_kernel_test $(B)/vm/ptaskd_e2e
VM_HELPERS += $(B)/vm/ptaskd

# T=NAME[,...] runs only those programs (graph_test or graph; ptaskd_e2e);
# the rest are still copied in as helpers.
VM_TESTS = $(KSFT_BINS) $(VM_DAEMON_PROGS)
VM_SELECTED = $(if $(strip $(UNIT_T)),$(filter $(foreach t,$(UNIT_T),%/$(t) %/$(t)_test),\
	$(VM_TESTS)),$(VM_TESTS))
VM_CHECK_ARGS = $(VM_SELECTED) \
	$(addprefix --helper ,$(KSFT_EXEC) $(VM_HELPERS) $(VM_CHECK_HELPERS))
# A T= that names no VM program is an error, not an empty pass.
VM_T_OK = if [ -z "$(strip $(VM_SELECTED))" ]; then \
		echo "check-vm: no VM test named '$(T)'"; echo "0 passed, 1 failed, 0 skipped"; exit 1; \
	fi

# One VM run per kernel in $(KERNEL), then their total (the last line).
check-vm:
	@mkdir -p $(B)/vm; parts=(); \
	for k in $(VM_KERNELS); do \
		echo "=== make check-vm-$$k"; \
		$(MAKE) check-vm-$$k 2>&1 | tee $(B)/vm/check-vm-$$k.out; \
		parts+=("check-vm-$$k=$(B)/vm/check-vm-$$k.out:$${PIPESTATUS[0]}"); \
	done; \
	echo "=== make check-vm"; \
	scripts/sum-results.sh "$${parts[@]}"

# What the guest runs besides the module (tests/vm/ptaskctl.mk adds to it).
check-vm-progs: kselftest ptaskd-static $(VM_DAEMON_PROGS)

check-vm-stock: module check-vm-progs
	@$(VM_T_OK)
	@if [ ! -f $(MODULE) ]; then \
		echo "check-vm: no $(MODULE) to test"; echo "0 passed, 1 failed, 0 skipped"; exit 1; \
	fi
	@tests/vm/run.sh check --kernel stock $(MODULE) $(VM_CHECK_ARGS)

check-vm-debug: module-debug check-vm-progs
	@$(VM_T_OK)
	@tests/vm/run.sh check --kernel debug $(DEBUG_MODULE) $(VM_CHECK_ARGS)

debug-kernel:
	@tests/vm/debug-kernel.sh build

# kmod/, core/ and uapi/ copied to $(DEBUG_KMOD) and built there: Kbuild
# writes objects beside the sources, and kmod/'s are the stock kernel's.
module-debug: debug-kernel
	@if [ -f kmod/Kbuild ]; then tests/vm/debug-kernel.sh module $(DEBUG_KMOD); fi

# Runs every part even when one fails; the last line is the total.
check:
	@$(MAKE) deps
	@mkdir -p $(B)/check; parts=(); \
	for part in $(CHECK_PARTS); do \
		echo "=== make $$part"; \
		$(MAKE) $$part 2>&1 | tee $(B)/check/$$part.out; \
		parts+=("$$part=$(B)/check/$$part.out:$${PIPESTATUS[0]}"); \
	done; \
	echo "=== make check"; \
	scripts/sum-results.sh "$${parts[@]}"

# --- the guest, by hand ----------------------------------------------------
demo:
	@$(MAKE) deps
	@$(MAKE) demo-gesture

demo-vm: module kselftest examples ptaskd-static
	@if [ ! -x "$(DEMO_PROG)" ]; then \
		echo "demo: no $(DEMO_PROG); name the program with DEMO_PROG=<static program>" >&2; exit 1; \
	fi
	@PTASK_VM_ARGS="$${PTASK_VM_ARGS-$(DEMO_ARGS)}" tests/vm/run.sh demo $(MODULE) $(DEMO_PROG) \
		$(addprefix --helper ,$(KSFT_EXEC) $(filter-out $(DEMO_PROG),$(EXAMPLE_BINS)) $(VM_HELPERS))

bench:
	@$(MAKE) deps
	@$(MAKE) bench-vm

bench-vm: module kselftest examples bench-progs
	@if [ -z "$(strip $(BENCH_PROGS))" ]; then \
		echo "bench: no bench/*.c to run" >&2; exit 1; \
	fi
	@tests/vm/run.sh bench $(MODULE) $(BENCH_PROGS) \
		$(addprefix --helper ,$(KSFT_EXEC) $(EXAMPLE_BINS) $(VM_HELPERS))

# --- static checks ---------------------------------------------------------
checkpatch:
	@scripts/checkpatch.sh

sparse: kernel-ok
	@scripts/sparse.sh $(KDIR)

check-kernels:
	@scripts/kernel-compat-build.sh $(KERNEL_SUITES)

check-dkms: kernel-ok
	@scripts/dkms-test.sh

clean:
	rm -rf $(B)
	@if [ -f kmod/Kbuild ] && [ -f "$(KDIR)/Makefile" ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod clean; \
	fi
	@find kmod core -name '*.o' -o -name '.*.cmd' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '*.ko' -o -name '*.order' -o -name '*.symvers' -o -name '.*.d' \
		2>/dev/null | xargs -r rm -f || true

# --- encfs-gpu: the encrypted FUSE filesystem (its own fragment) ------------
include encfs-gpu/Makefile.inc

# --- ptaskd and libptask (their own fragment) --------------------------------
include daemon/Makefile.inc

# --- PTSched's experiments on the sim backend (make bench-sim) ---------------
include bench/bench.mk

$(B)/vm/source_kernel_test: tests/vm/source_kernel_test.c daemon/kernel/source_kernel.c \
		daemon/kernel/netlink.c daemon/log.c daemon/kernel/source_kernel.h \
		daemon/kernel/netlink.h daemon/log.h $(KSFT_DEPS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(STATIC_CFLAGS) -I$(KSFT_DIR) -o $@ $(filter %.c,$^) $(PC_A) $(NL_LIBS) $(NL_QUIET)

# ptaskd end to end over both transports, for the host and the guest
include tests/e2e/e2e.mk
include examples/examples.mk
include tests/twins/twins.mk
include tests/unit/unit.mk
include examples/gesture/gesture.mk
include tests/gpu/gpu.mk
# ptaskctl in kernel mode in the guest (adds to check-vm)
include tests/vm/ptaskctl.mk
include install.mk

# Every twin library; tests point ptaskd at $(TWIN_B) (PTASKD_HOST_KERNELS).
twins: $(TWIN_SOS)
.PHONY: twins
include debian/deb.mk
# ptask.ko under DKMS: make dkms-install, dkms-uninstall
include kmod/dkms.mk
