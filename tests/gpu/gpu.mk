# SPDX-License-Identifier: GPL-2.0
# tests/gpu/gpu.mk - the CUDA backend's GPU test and the raw GPU baseline,
# included by the top-level Makefile.
#
#   gpu-progs   build/gpu/cuda_backend_test  daemon/backend/cuda*.c (+ log.c)
#               build/gpu/gpu_raw            bench/gpu_raw.c, no ptaskd
#               (both with build/lib/libptask-common.a: the CUDA shim)
#               build/gpu/kernels.ptx        tests/gpu/kernels.cu (nvcc)
#   check-gpu   gpu-progs, then tests/gpu/run-gpu.sh here (77/skip when
#               there is no GPU); last line "N passed, M failed, K skipped"
#
# Nothing here needs a GPU or the CUDA headers to build except
# kernels.ptx, which needs nvcc.  The programs load libcuda.so.1 at run
# time.  On the lent GPU machine nothing is built: carry build/gpu and run
# tests/gpu/run-gpu.sh there.  Every variable is GPU_-prefixed.

GPU_B := build/gpu
GPU_CFLAGS := -std=gnu11 -O2 -g $(WARN_FLAGS) -I. -D_GNU_SOURCE
GPU_LIBS := -ldl -lpthread
GPU_NVCC ?= $(or $(wildcard /usr/local/cuda/bin/nvcc),nvcc)
GPU_NVCC_ARCH ?= sm_90

.PHONY: gpu-progs check-gpu

gpu-progs: $(GPU_B)/cuda_backend_test $(GPU_B)/gpu_raw $(GPU_B)/kernels.ptx \
	$(GPU_B)/fault_client

# tests/gpu/ptaskd_fatal.sh's client (libptask; its PTX is bench/kernels.cu's)
$(GPU_B)/fault_client: tests/gpu/fault_client.c $(LIBPT_A)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	@$(CC) $(GPU_CFLAGS) -Ilibptask -Iuapi -o $@ $< $(LIBPT_A) -lpthread

GPU_CUDA_SRCS := $(sort $(wildcard daemon/backend/cuda*.c)) daemon/backend/held.c

$(GPU_B)/cuda_backend_test: tests/gpu/cuda_backend_test.c $(GPU_CUDA_SRCS) \
		daemon/backend/backend.h daemon/backend/cuda_priv.h \
		daemon/backend/held.h daemon/log.c \
		daemon/log.h $(PC_A) uapi/ptask.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	@$(CC) $(GPU_CFLAGS) -o $@ tests/gpu/cuda_backend_test.c \
		$(GPU_CUDA_SRCS) daemon/log.c $(PC_A) $(GPU_LIBS)
# (pd_fatal, which backend/cuda*.c call on a sticky error, is the test's own)

$(GPU_B)/gpu_raw: bench/gpu_raw.c $(PC_A)
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	@$(CC) $(GPU_CFLAGS) -o $@ bench/gpu_raw.c $(PC_A) $(GPU_LIBS)

$(GPU_B)/kernels.ptx: tests/gpu/kernels.cu
	@mkdir -p $(@D)
	@echo "  NVCC    $@"
	@$(GPU_NVCC) -ptx -arch=$(GPU_NVCC_ARCH) -O3 -o $@ $<

check-gpu: gpu-progs
	@tests/gpu/run-gpu.sh
