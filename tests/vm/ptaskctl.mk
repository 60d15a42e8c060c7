# SPDX-License-Identifier: GPL-2.0
# tests/vm/ptaskctl.mk - ptaskctl in kernel mode in the test guest, for
# `make check-vm` (included by the top-level Makefile):
#
#   build/vm/ptaskctl_vm_test   the test (tests/vm/ptaskctl_vm_test.c)
#   build/vm/ptaskctl           static ptaskctl (tools/ptaskctl/ptaskctl.mk)
#   build/vm/ptaskctl_client    static tests/daemon/ptaskctl_client.c: a
#                               graph for ptaskctl to show, in kernel mode
#
# The test goes with the other daemon programs; the two others are
# helpers (VM_CHECK_HELPERS: check-vm only, demo and bench do not need them).

VM_DAEMON_PROGS += $(B)/vm/ptaskctl_vm_test
VM_CHECK_HELPERS += $(B)/vm/ptaskctl $(B)/vm/ptaskctl_client

check-vm-progs: $(B)/vm/ptaskctl_vm_test $(B)/vm/ptaskctl $(B)/vm/ptaskctl_client

$(B)/vm/ptaskctl_vm_test: tests/vm/ptaskctl_vm_test.c $(KSFT_DEPS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(STATIC_CFLAGS) -I$(KSFT_DIR) -o $@ $(filter %.c,$^) $(PC_A) $(NL_LIBS) $(NL_QUIET)

$(B)/vm/ptaskctl_client: tests/daemon/ptaskctl_client.c $(LIBPT_A)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(STATIC_CFLAGS) -Iuapi -Ilibptask -o $@ $< $(LIBPT_A) $(NL_LIBS) $(NL_QUIET)
