# SPDX-License-Identifier: GPL-2.0
# examples/gesture/gesture.mk - the gesture pipeline demo, included by the
# top-level Makefile (after daemon/Makefile.inc and examples/examples.mk).
#
#   gesture        build/bin/gesture: catusb, the four stages and the five
#                  implementations (CUDA through the common library's
#                  dlopen shim, common/cuda_dl.c: builds without it)
#   gesture-ptx    regenerate gesture_kernels.ptx (needs nvcc; committed)
#   check-gesture  the golden event stream and the bad recordings
#                  (tests/gesture/run.sh); "N passed, M failed, K skipped"
#   demo-gesture   what `make demo` runs: examples/gesture/demo.sh
#
# -ffp-contract=off: the stages must compute exactly as ptaskd's host
# twins and (with nvcc --fmad=false) as the kernels do; see gesture_math.h.
# Variables are GS_-prefixed.

GS_B := build
GS_OBJ := $(GS_B)/obj/gesture
GS_CFLAGS := -std=gnu11 -O2 -g $(WARN_FLAGS) -ffp-contract=off \
	-I. -Iuapi -Ilibptask -D_GNU_SOURCE
GS_NVCC ?= $(or $(wildcard /usr/local/cuda/bin/nvcc),$(shell command -v nvcc 2>/dev/null))
GS_CU := examples/gesture/gesture_kernels.cu
GS_PTX := examples/gesture/gesture_kernels.ptx
# twin.c is the kernels' host twin library, not part of the program
GS_SRCS := $(sort $(filter-out examples/gesture/twin.c,$(wildcard examples/gesture/*.c)))
GS_HDRS := $(wildcard examples/gesture/*.h) common/cuda_dl.h common/cuda_dev.h \
	libptask/libptask.h uapi/ptask.h
GS_OBJS := $(GS_SRCS:examples/gesture/%.c=$(GS_OBJ)/%.o) \
	$(GS_OBJ)/gesture_ptx.o
GS_BIN := $(GS_B)/bin/gesture

.PHONY: gesture gesture-ptx check-gesture demo-gesture

gesture: $(GS_BIN)
gesture-ptx: $(GS_PTX)

ifneq ($(strip $(GS_NVCC)),)
$(GS_PTX): $(GS_CU) examples/gesture/gesture_math.h
	@echo "  NVCC    $@"
	$(Q)$(GS_NVCC) -ptx -arch=sm_90 -O3 --fmad=false -o $@ $<
endif

$(GS_OBJ)/%.o: examples/gesture/%.c $(GS_HDRS)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(CC) $(GS_CFLAGS) -c -o $@ $<

$(GS_OBJ)/gesture_ptx.o: examples/gesture/gesture_ptx.S $(GS_PTX)
	@mkdir -p $(@D)
	@echo "  AS      $@"
	$(Q)$(CC) -c -DGESTURE_PTX_FILE='"$(GS_PTX)"' -o $@ $<

$(GS_BIN): $(GS_OBJS) $(LIBPT_A) $(PC_A)
	@mkdir -p $(@D)
	@echo "  LD      $@"
	$(Q)$(CC) $(GS_CFLAGS) -o $@ $(GS_OBJS) $(LIBPT_A) $(PC_A) -lpthread -ldl

check-gesture: $(GS_BIN) $(PD_BIN) $(TWIN_B)/gesture.so
	@tests/gesture/run.sh

demo-gesture: $(GS_BIN) $(PD_BIN) $(TWIN_B)/gesture.so
	@examples/gesture/demo.sh

# The kernels' host twins (ptaskd's cpu and sim backends load them)
TWIN_SOS += $(TWIN_B)/gesture.so
$(TWIN_B)/gesture.so: examples/gesture/twin.c $(GS_HDRS) uapi/ptask_twin.h \
		$(GS_OBJ)/gesture_ptx.o
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(TWIN_CFLAGS) -ffp-contract=off -o $@ $< $(GS_OBJ)/gesture_ptx.o

# the twins alone, under ASan and UBSan
GS_HK_TEST := $(GS_B)/tests/gesture/twin_test
GS_HK_SRCS := tests/gesture/twin_test.c examples/gesture/twin.c \
	examples/gesture/scene.c examples/gesture/stages_cpu.c

$(GS_HK_TEST): $(GS_HK_SRCS) $(GS_HDRS) uapi/ptask_twin.h $(GS_OBJ)/gesture_ptx.o
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(GS_CFLAGS) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -fno-omit-frame-pointer -o $@ \
		$(GS_HK_SRCS) $(GS_OBJ)/gesture_ptx.o -lpthread

check-gesture: $(GS_HK_TEST)

# the recording reader's libFuzzer target (clang; make deps installs it)
GS_FUZZ := $(GS_B)/tests/gesture/recording_fuzz
GS_FUZZ_SRCS := tests/gesture/recording_fuzz.c examples/gesture/recording.c \
	examples/gesture/scene.c

$(GS_FUZZ): $(GS_FUZZ_SRCS) $(GS_HDRS)
	@mkdir -p $(@D)
	@echo "  CCLD    $@ (libFuzzer)"
	$(Q)clang -std=gnu11 -O1 -g $(WARN_FLAGS) -ffp-contract=off -I. \
		-D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $(GS_FUZZ_SRCS)

check-gesture: $(GS_FUZZ)
