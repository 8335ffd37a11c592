# CUDA detection: nvcc present (PATH or CUDA_HOME, default /usr/local/cuda) -> the GPU backend is compiled for
# OCEAN_CUDA_ARCHS (sm_90 and sm_80 by default) and linked, even without a GPU.  OCEAN_CUDA=0 skips it.
CUDA_HOME ?= /usr/local/cuda
OCEAN_CUDA ?= auto
OCEAN_CUDA_ARCHS ?= 90 80
OCEAN_NVCC := $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
ifeq ($(OCEAN_CUDA),0)
  OCEAN_HAVE_CUDA := no
  OCEAN_CUDA_REASON := disabled by OCEAN_CUDA=0
else ifeq ($(OCEAN_NVCC),)
  OCEAN_HAVE_CUDA := no
  OCEAN_CUDA_REASON := nvcc not found (CUDA_HOME=$(CUDA_HOME))
else
  OCEAN_HAVE_CUDA := yes
  OCEAN_CUDA_ROOT := $(patsubst %/bin/nvcc,%,$(OCEAN_NVCC))
  OCEAN_CUDA_REASON := $(OCEAN_NVCC) ($(shell $(OCEAN_NVCC) --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))
  OCEAN_CUDA_LIBDIR := $(firstword $(wildcard $(OCEAN_CUDA_ROOT)/lib64 $(OCEAN_CUDA_ROOT)/lib))
  OCEAN_CUDA_GENCODE := $(foreach a,$(OCEAN_CUDA_ARCHS),-gencode=arch=compute_$(a),code=sm_$(a))
  OCEAN_CUDA_LINK := -L$(OCEAN_CUDA_LIBDIR) -Wl,-rpath,$(OCEAN_CUDA_LIBDIR) -lcudart -lstdc++
endif
