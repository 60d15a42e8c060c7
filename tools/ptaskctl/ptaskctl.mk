# SPDX-License-Identifier: GPL-2.0
# tools/ptaskctl/ptaskctl.mk - ptaskctl, included by install.mk.
#
#   ptaskctl         build/bin/ptaskctl (dynamic; libnl-genl-3), linked
#                    with build/lib/libptask-common.a (common/common.mk)
#   ptaskctl-static  build/vm/ptaskctl, static, for the test guest
#
# Every tools/ptaskctl/*.c is linked in: a new subcommand is a new .c
# file with a PTASKCTL_COMMAND() line (see ptaskctl.h), nothing else.

PTCTL_B := build
PTCTL_SRCS := $(sort $(wildcard tools/ptaskctl/*.c))
PTCTL_OBJS := $(PTCTL_SRCS:tools/ptaskctl/%.c=$(PTCTL_B)/obj/ptaskctl/%.o)
PTCTL_CFLAGS := -std=gnu11 -O2 -g $(WARN_FLAGS) -I. -Iuapi -D_GNU_SOURCE \
	$(NL_CFLAGS)
PTCTL_BIN := $(PTCTL_B)/bin/ptaskctl

.PHONY: ptaskctl ptaskctl-static

ptaskctl: $(PTCTL_BIN)
ptaskctl-static: $(PTCTL_B)/vm/ptaskctl

$(PTCTL_B)/obj/ptaskctl/%.o: tools/ptaskctl/%.c
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(CC) $(PTCTL_CFLAGS) -MMD -MP -c -o $@ $<

$(PTCTL_BIN): $(PTCTL_OBJS) $(PC_A)
	@mkdir -p $(@D)
	@echo "  LD      $@"
	$(Q)$(CC) $(PTCTL_CFLAGS) -o $@ $^ $(NL_LIBS)

$(PTCTL_B)/vm/ptaskctl: $(PTCTL_OBJS) $(PC_A)
	@mkdir -p $(@D)
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(PTCTL_CFLAGS) -static -o $@ $^ $(NL_LIBS) $(NL_QUIET)

-include $(PTCTL_OBJS:.o=.d)
