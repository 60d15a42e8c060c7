# SPDX-License-Identifier: GPL-2.0
# examples/examples.mk - the gemm example and the raw-ioctl gemm client,
# included by the top-level Makefile (after daemon/Makefile.inc, whose
# rule makes build/lib/libptask.a).
#
#   gemm        build/bin/gemm: D = (A x B) x C several ways (ptask and
#               ptask_pipe through libptask, modular, handcoded and
#               handstream on the CUDA driver API,
#               loaded at run time by the common library's shim,
#               common/cuda_dl.c: no CUDA toolkit needed to build)
#   ioctl-raw   build/bin/ioctl-raw: the same two-ptask graph with raw
#               ioctls on /dev/ptask and uapi/ptask.h only; static, so it
#               runs in the test guest
#   gemm-ptx    regenerate examples/gemm/gemm_kernels.ptx from the .cu
#               (needs nvcc; the PTX is committed so builds without it work)
#
# The PTX is embedded in both programs (gemm_ptx.S, .incbin).  When nvcc
# exists, a .cu newer than the committed PTX is recompiled first.
# Variables are EX_-prefixed.

EX_B := build
EX_OBJ := $(EX_B)/obj/examples
EX_CFLAGS := -std=gnu11 -O2 -g $(WARN_FLAGS) -I. -Iuapi
EX_NVCC ?= $(or $(wildcard /usr/local/cuda/bin/nvcc),$(shell command -v nvcc 2>/dev/null))
EX_NVCC_ARCH ?= sm_90
EX_LIBPTASK_A := $(EX_B)/lib/libptask.a

EX_GEMM_CU := examples/gemm/gemm_kernels.cu
EX_GEMM_PTX := examples/gemm/gemm_kernels.ptx
EX_GEMM_HDRS := examples/gemm/gemm.h common/cuda_dl.h common/cuda_dev.h \
	libptask/libptask.h uapi/ptask.h
EX_GEMM_OBJS := $(addprefix $(EX_OBJ)/,gemm/gemm.o gemm/gemm_ptask.o \
	gemm/gemm_cuda.o gemm/gemm_handstream.o gemm/gemm_ref.o \
	gemm/gemm_ptx.o)
EX_GEMM_BIN := $(EX_B)/bin/gemm

EX_RAW_SRCS := examples/ioctl-raw/ioctl_raw.c examples/gemm/gemm_ref.c \
	examples/gemm/gemm_ptx.S
EX_RAW_BIN := $(EX_B)/bin/ioctl-raw

.PHONY: gemm ioctl-raw gemm-ptx

gemm: $(EX_GEMM_BIN)
ioctl-raw: $(EX_RAW_BIN)
gemm-ptx: $(EX_GEMM_PTX)

# make check-daemon runs build/bin/gemm (tests/daemon/gemm_test.sh)
daemon-tests: $(EX_GEMM_BIN)

ifneq ($(strip $(EX_NVCC)),)
$(EX_GEMM_PTX): $(EX_GEMM_CU)
	@echo "  NVCC    $@"
	$(Q)$(EX_NVCC) -ptx -arch=$(EX_NVCC_ARCH) -O3 -o $@ $<
endif

$(EX_OBJ)/%.o: examples/%.c $(EX_GEMM_HDRS)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(CC) $(EX_CFLAGS) $(EX_OPT) -MMD -MP -c -o $@ $<

# the CPU reference is the only hot loop here: let it vectorize
$(EX_OBJ)/gemm/gemm_ref.o: EX_OPT := -O3

$(EX_OBJ)/gemm/gemm_ptx.o: examples/gemm/gemm_ptx.S $(EX_GEMM_PTX)
	@mkdir -p $(@D)
	@echo "  AS      $@"
	$(Q)$(CC) -c -DGEMM_PTX_FILE='"$(EX_GEMM_PTX)"' -o $@ $<

$(EX_GEMM_BIN): $(EX_GEMM_OBJS) $(EX_LIBPTASK_A) $(PC_A)
	@mkdir -p $(@D)
	@echo "  LD      $@"
	$(Q)$(CC) $(EX_CFLAGS) -o $@ $(EX_GEMM_OBJS) $(EX_LIBPTASK_A) $(PC_A) \
		-lpthread -ldl -lm

# sgemm's host twin (ptaskd's cpu and sim backends load it)
TWIN_SOS += $(TWIN_B)/gemm.so
$(TWIN_B)/gemm.so: examples/gemm/twin.c examples/gemm/gemm.h uapi/ptask_twin.h \
		$(EX_OBJ)/gemm/gemm_ptx.o
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) $(TWIN_CFLAGS) -o $@ $< $(EX_OBJ)/gemm/gemm_ptx.o

# -I. only: the raw client needs nothing but the uapi header
$(EX_RAW_BIN): $(EX_RAW_SRCS) $(EX_GEMM_PTX) examples/gemm/gemm.h uapi/ptask.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@ (static)"
	$(Q)$(CC) -std=gnu11 -O2 -g $(WARN_FLAGS) -I. -static \
		-DGEMM_PTX_FILE='"$(EX_GEMM_PTX)"' -o $@ $(EX_RAW_SRCS) \
		-lpthread -lm

-include $(EX_GEMM_OBJS:.o=.d)
