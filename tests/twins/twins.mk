# SPDX-License-Identifier: GPL-2.0
# tests/twins/twins.mk - the tests' twin library, included by the
# top-level Makefile after daemon/Makefile.inc.
#
#   build/twins/tests.so   tests/twins/twin.c: ptask_copy, vec_add and
#                          vec_scale, bound to tests/twins/test_code.h
#   build/twins/wrong/     a directory ptaskd must refuse (group-writable),
#                          made by tests/daemon/twins_test.sh itself

TWIN_SOS += $(TWIN_B)/tests.so
$(TWIN_B)/tests.so: tests/twins/twin.c tests/twins/test_code.h uapi/ptask_twin.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(TWIN_CFLAGS) -o $@ $<
