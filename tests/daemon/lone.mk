# SPDX-License-Identifier: GPL-2.0
# tests/daemon/lone.mk - the cuda backend's one-node graph policy without a
# GPU, included by daemon/Makefile.inc.
#
#   build/tests/daemon/lone_test   tests/daemon/lone_test.c linked with
#                  daemon/backend/cuda_lone.c alone, under ASan and UBSan,
#                  the driver's graph calls replaced by counting stand-ins;
#                  run by tests/daemon/run.sh (make check-daemon), or alone.

PD_LONE_TEST := $(PD_B)/tests/daemon/lone_test
PD_LONE_TEST_SRCS := tests/daemon/lone_test.c daemon/backend/cuda_lone.c

$(PD_LONE_TEST): $(PD_LONE_TEST_SRCS) daemon/backend/cuda_priv.h \
		daemon/backend/backend.h daemon/backend/held.h common/cuda_dl.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(PD_ENGINE_TEST_CFLAGS) -o $@ $(PD_LONE_TEST_SRCS)
