# SPDX-License-Identifier: GPL-2.0
# tests/unit/unit.mk - the core's unit tests and the fuzz targets, built
# by make (incrementally: an object is rebuilt when its source or a header
# it includes changed), included by the top-level Makefile.
#
#   unit-progs     build/unit/<name> for every tests/unit/*_test.c, linked
#                  with every core/*.c and every other tests/unit/*.c;
#                  build/fuzz/<name> for every tests/fuzz/*_fuzz.c but
#                  encfs-gpu's (tests/encfs/run.sh builds those), linked
#                  with core/, tests/unit/os_user.c and every other
#                  tests/fuzz/*.c.  clang, ASan + UBSan; fuzzers libFuzzer.
#   check-unit     build what is selected (make -k: one that does not
#                  build is a failure, the others still run), then
#                  scripts/run-unit.sh runs it; T=NAME[,NAME...] selects
#                  tests by name (graph_core_test or graph_core, args_fuzz
#                  or args), default all.

UNIT_CC ?= clang
UNIT_B := $(B)/unit
FUZZ_B := $(B)/fuzz
UNIT_CFLAGS := -std=gnu11 -O1 -g $(WARN_FLAGS) -I. -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all
UNIT_CORE := $(sort $(wildcard core/*.c))

UNIT_TESTS := $(sort $(wildcard tests/unit/*_test.c))
UNIT_HELPERS := $(filter-out %_test.c,$(sort $(wildcard tests/unit/*.c)))
UNIT_OBJS := $(patsubst %.c,$(UNIT_B)/obj/%.o,$(UNIT_CORE) $(UNIT_HELPERS))
UNIT_BINS := $(UNIT_TESTS:tests/unit/%.c=$(UNIT_B)/%)

FUZZ_TARGETS := $(filter-out tests/fuzz/encfs_%,$(sort $(wildcard tests/fuzz/*_fuzz.c)))
FUZZ_HELPERS := $(wildcard tests/unit/os_user.c) \
	$(filter-out %_fuzz.c,$(sort $(wildcard tests/fuzz/*.c)))
FUZZ_OBJS := $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(UNIT_CORE) $(FUZZ_HELPERS))
FUZZ_BINS := $(FUZZ_TARGETS:tests/fuzz/%.c=$(FUZZ_B)/%)

$(UNIT_B)/obj/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -MMD -MP -c -o $@ $<

$(UNIT_B)/%: tests/unit/%.c $(UNIT_OBJS)
	@echo "  CCLD    $@"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(UNIT_OBJS) -lpthread -lm

$(FUZZ_B)/obj/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC      $@ (fuzz)"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_B)/%: tests/fuzz/%.c $(FUZZ_OBJS)
	@echo "  CCLD    $@ (libFuzzer)"
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -fsanitize=fuzzer -MMD -MP -MF $@.d -o $@ $< \
		$(FUZZ_OBJS) -lpthread -lm

-include $(UNIT_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) $(UNIT_BINS:=.d) $(FUZZ_BINS:=.d)

unit-progs: $(UNIT_BINS) $(FUZZ_BINS)

# T=a,b: the programs whose name is a or a_test / a_fuzz
UNIT_T := $(subst $(comma), ,$(T))
UNIT_SELECTED := $(if $(strip $(UNIT_T)),$(filter $(foreach t,$(UNIT_T),\
	$(UNIT_B)/$(t) $(UNIT_B)/$(t)_test $(FUZZ_B)/$(t) $(FUZZ_B)/$(t)_fuzz),\
	$(UNIT_BINS) $(FUZZ_BINS)),$(UNIT_BINS) $(FUZZ_BINS))

check-unit:
	@if [ -n "$(strip $(UNIT_T))" ] && [ -z "$(strip $(UNIT_SELECTED))" ]; then \
		echo "check-unit: no unit test or fuzz target named '$(T)'"; \
		echo "0 passed, 1 failed, 0 skipped"; exit 1; \
	fi
	@# A program that failed to build must not run from an older binary.
	@$(MAKE) -k $(UNIT_SELECTED) || for b in $(UNIT_SELECTED); do \
		$(MAKE) -q $$b 2>/dev/null || rm -f $$b; done
	@scripts/run-unit.sh $(UNIT_SELECTED)

.PHONY: unit-progs check-unit
