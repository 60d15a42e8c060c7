# SPDX-License-Identifier: GPL-2.0
# common/common.mk - the internal plumbing library, included by the
# top-level Makefile before every part that links it.
#
#   common   build/lib/libptask-common.a from common/*.c: the generic-
#            netlink client (genl.c), ptaskd's message framing (msg.c),
#            the submission and completion rings both sides share
#            (ring.c, with the core's layout: core/ring_layout.c), the
#            CUDA driver API shim (cuda_dl.c, cuda_dev.c)
#            and the hash table (hash.c); see Documentation/ptaskd.md
#
# Linked into ptaskd, libptask (its .so and .a carry what they use),
# ptaskctl, the examples, the tests and the benchmarks, dynamic and static
# alike: objects are built -fPIC (libptask.so takes them in) with hidden
# visibility (nothing of them is exported from a shared object).  Link
# $(PC_A) before $(NL_LIBS) and -ldl: genl.o needs libnl-genl-3,
# cuda_dl.o needs dlopen.  Sources are found by wildcard; variables are
# PC_-prefixed.

PC_B := build
PC_SRCS := $(sort $(wildcard common/*.c))
# The ring layout and its checks are the core's (ptask.ko compiles them
# too); programs that link no core take them from here.  One that does
# (ptaskd, the unit tests) defines them first, so the linker never pulls
# this copy out of the archive.
PC_CORE_SRCS := core/ring_layout.c
PC_OBJS := $(PC_SRCS:common/%.c=$(PC_B)/obj/common/%.o) \
	$(PC_CORE_SRCS:core/%.c=$(PC_B)/obj/common-core/%.o)
PC_CFLAGS := -std=gnu11 -O2 -g $(WARN_FLAGS) -I. -D_GNU_SOURCE \
	-fPIC -fvisibility=hidden $(NL_CFLAGS)
PC_A := $(PC_B)/lib/libptask-common.a

.PHONY: common

common: $(PC_A)

$(PC_B)/obj/common/%.o: common/%.c
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(CC) $(PC_CFLAGS) -MMD -MP -c -o $@ $<

$(PC_B)/obj/common-core/%.o: core/%.c
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(CC) $(PC_CFLAGS) -MMD -MP -c -o $@ $<

$(PC_A): $(PC_OBJS)
	@mkdir -p $(@D)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

-include $(PC_OBJS:.o=.d)
