# SPDX-License-Identifier: GPL-2.0
# tests/daemon/engine.mk - the engine's in-process test, included by
# daemon/Makefile.inc.
#
#   build/tests/daemon/engine_test   tests/daemon/engine_test.c linked with
#                  the engine, the sim and cpu backends, the user-mode
#                  namespace, the core and the common hash table, all
#                  under ASan and UBSan; run
#                  by tests/daemon/run.sh with the other daemon tests
#                  (make check-daemon), or alone.

PD_ENGINE_TEST := $(PD_B)/tests/daemon/engine_test
PD_ENGINE_TEST_SRCS := tests/daemon/engine_test.c daemon/log.c daemon/trace.c common/hash.c \
	$(sort $(wildcard daemon/engine/*.c)) \
	$(addprefix daemon/backend/,backend.c held.c sim.c cpu.c twins.c) \
	tests/twins/twin.c examples/gemm/twin.c \
	$(addprefix daemon/user/,ns_user.c ns_buf.c ns_exec_hold.c ns_timer.c source_user.c \
		arena.c ns_admin.c) \
	$(sort $(wildcard core/*.c))
PD_ENGINE_TEST_CFLAGS := -std=gnu11 -O1 -g $(WARN_FLAGS) -I. -Iuapi \
	-Icore -Icore/user -D_GNU_SOURCE -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all

$(PD_ENGINE_TEST): $(PD_ENGINE_TEST_SRCS) $(wildcard daemon/*.h daemon/*/*.h core/*.h common/*.h) \
		uapi/ptask.h uapi/ptask_twin.h tests/twins/test_code.h $(PD_B)/obj/examples/gemm/gemm_ptx.o
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(PD_ENGINE_TEST_CFLAGS) -o $@ $(PD_ENGINE_TEST_SRCS) \
		$(PD_B)/obj/examples/gemm/gemm_ptx.o -lpthread -lm -ldl

.PHONY: engine-test
engine-test: $(PD_ENGINE_TEST)
