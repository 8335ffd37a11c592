# petsc-ocean: estimation-driven GPU SpGEMM for PETSc's aij products.
#   make            build lib/libpetscocean.so (and the CUDA backend where nvcc is found)
#   make run        install what is missing, build, and run the main job (examples/elasticity_amg)
#   make test       build and run the whole test suite (last line: "N passed, N failed")
#   make info       print what was found
.DEFAULT_GOAL := lib
.SUFFIXES:
.DELETE_ON_ERROR:

include config/petsc.mk
include config/cuda.mk

BUILD   := build
LIBDIR  := lib
LIBNAME := $(LIBDIR)/libpetscocean.so
CC      := $(or $(OCEAN_PETSC_CC),mpicc)
OPTFLAGS ?= -O2 -g
WARNFLAGS := -Wall -Wextra -Wno-unused-parameter -Wmissing-prototypes -Wstrict-prototypes
# PETSc's and CUDA's headers are not ours: -isystem keeps their warnings out of our build.
PETSC_SYS_INCLUDES := $(patsubst -I%,-isystem %,$(PETSC_CC_INCLUDES))
CPPFLAGS_CORE := -Iinclude -Isrc -Icuda -D_POSIX_C_SOURCE=200809L
# no contraction into FMA: the sketch estimate (core/rules.h) must give the GPU's bits (ocean_sketches.cu: -fmad=false)
CFLAGS_CORE   := -std=c99 -fPIC -fopenmp -ffp-contract=off $(OPTFLAGS) $(WARNFLAGS)
CFLAGS_PETSC  := -std=c99 -fPIC -fopenmp $(OPTFLAGS) $(WARNFLAGS) $(PETSC_SYS_INCLUDES)

# src/core: backend-neutral; src/cpu, src/cuda: the backends' host code; src/mat: the PETSc face; cuda: nvcc only
CORE_SRC  := $(wildcard src/core/*.c src/cpu/*.c src/cuda/*.c src/*.c)
PETSC_SRC := $(wildcard src/mat/*.c)
SRC_HDR   := $(wildcard src/*.h src/*/*.h)
CUDA_SRC  := $(wildcard cuda/*.cu)
CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/%.o)
PETSC_OBJ := $(PETSC_SRC:%.c=$(BUILD)/%.o)
ifeq ($(OCEAN_HAVE_CUDA),yes)
  CPPFLAGS_CORE += -DOCEAN_HAVE_CUDA
  CUDA_OBJ  := $(CUDA_SRC:%.cu=$(BUILD)/%.o)
  NVCCFLAGS := -std=c++17 -O3 -lineinfo $(OCEAN_CUDA_GENCODE) -Xcompiler -fPIC,-Wall,-fopenmp -Iinclude -Isrc -Icuda
endif

# C handed to aijcusparse on the device (src/mat/devicec.cu) reads PETSc's private cusparsematimpl.h: built only
# against a CUDA PETSc whose source tree holds it, of a version whose structures it was written for (3.25 on), with
# PETSc's C++ compiler and dialect; elsewhere (or with OCEAN_CUSPARSE_DEVICE_C=no) PETSc uploads C.
OCEAN_PETSC_CONF_H := $(firstword $(foreach d,$(patsubst -I%,%,$(filter -I%,$(PETSC_CC_INCLUDES))),$(wildcard $(d)/petscconf.h)))
OCEAN_PETSC_CUSPARSE_H := $(wildcard $(PETSC_DIR)/src/mat/impls/aij/seq/seqcusparse/cusparsematimpl.h)
ifeq ($(origin OCEAN_CUSPARSE_DEVICE_C),undefined)
  OCEAN_PETSC_AT_LEAST_3_25 := $(filter 3.25,$(firstword $(shell printf '%s\n' 3.25 $(OCEAN_PETSC_VERSION) | sort -V)))
  OCEAN_CUSPARSE_DEVICE_C := $(if $(and $(filter yes,$(OCEAN_HAVE_CUDA)),$(OCEAN_PETSC_CUSPARSE_H),$(OCEAN_PETSC_CONF_H),$(OCEAN_PETSC_AT_LEAST_3_25)),$(shell grep -q 'define PETSC_HAVE_CUDA 1' $(OCEAN_PETSC_CONF_H) && echo yes),)
endif
ifeq ($(OCEAN_CUSPARSE_DEVICE_C),yes)
  OCEAN_PETSC_CXX   := $(shell sed -n 's/^CUDA_CXX = //p' $(OCEAN_PETSC_VARIABLES))
  OCEAN_PETSC_CXXSTD := $(filter -std=%,$(shell sed -n 's/^CUDAC_FLAGS = //p' $(OCEAN_PETSC_VARIABLES)))
  PETSC_CU_OBJ      := $(BUILD)/src/mat/devicec.o
  PETSC_CU_LINK     := -lcusparse
  CFLAGS_PETSC      += -DOCEAN_HAVE_CUSPARSE_DEVICE_C
endif

.PHONY: lib info run test tests-build clean deps
lib: $(LIBNAME)

# -z nodelete: PETSc main dlcloses -dll_append libraries in PetscFinalize(); unloading the OpenMP runtime under its
# idle worker threads made them crash at exit now and then
$(LIBNAME): $(CORE_OBJ) $(PETSC_OBJ) $(PETSC_CU_OBJ) $(CUDA_OBJ) | check-petsc
	@mkdir -p $(LIBDIR)
	$(CC) -shared -fopenmp -Wl,--no-undefined -Wl,-z,nodelete -o $@ $^ $(PETSC_LINK) $(PETSC_CU_LINK) $(OCEAN_CUDA_LINK) -lm

$(BUILD)/src/mat/%.o: src/mat/%.c include/ocean.h include/petscmatocean.h $(SRC_HDR) | check-petsc
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) $(CFLAGS_PETSC) -c $< -o $@

$(BUILD)/src/%.o: src/%.c include/ocean.h $(SRC_HDR) $(wildcard cuda/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) $(CFLAGS_CORE) -c $< -o $@

# the archs compiled for, in a file that changes only when they do: objects of other archs are rebuilt
ifeq ($(OCEAN_HAVE_CUDA),yes)
CUDA_ARCH_STAMP := $(BUILD)/cuda/archs
$(shell mkdir -p $(BUILD)/cuda && { [ "$$(cat $(CUDA_ARCH_STAMP) 2>/dev/null)" = "$(OCEAN_CUDA_ARCHS)" ] || echo "$(OCEAN_CUDA_ARCHS)" > $(CUDA_ARCH_STAMP); })
endif

$(BUILD)/cuda/ocean_sketches.o: NVCCFLAGS += -fmad=false
$(BUILD)/cuda/%.o: cuda/%.cu include/ocean.h $(SRC_HDR) $(wildcard cuda/*.h) $(wildcard cuda/*.cuh) $(CUDA_ARCH_STAMP)
	@mkdir -p $(dir $@)
	$(OCEAN_NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/src/mat/devicec.o: src/mat/devicec.cu include/ocean.h include/petscmatocean.h src/mat/matocean.h \
                            $(CUDA_ARCH_STAMP) | check-petsc
	@mkdir -p $(dir $@)
	$(OCEAN_NVCC) $(if $(OCEAN_PETSC_CXX),-ccbin $(OCEAN_PETSC_CXX)) $(or $(OCEAN_PETSC_CXXSTD),-std=c++17) -O2 \
	  $(OCEAN_CUDA_GENCODE) -Xcompiler -fPIC -DOCEAN_HAVE_CUSPARSE_DEVICE_C -Iinclude -Isrc $(PETSC_CC_INCLUDES) -c $< -o $@

.PHONY: check-petsc
check-petsc:
	@if [ "$(OCEAN_PETSC_FOUND)" != yes ]; then echo "PETSc $(OCEAN_PETSC_SOURCE)" >&2; exit 1; fi

info:
	@echo "PETSc        : $(OCEAN_PETSC_FOUND), $(OCEAN_PETSC_SOURCE), version $(OCEAN_PETSC_VERSION)"
	@echo "PETSc libdir : $(OCEAN_PETSC_LIBDIR)"
	@echo "C compiler   : $(CC) ($(shell $(CC) --version 2>/dev/null | head -n 1))"
	@echo "CUDA backend : $(OCEAN_HAVE_CUDA), $(OCEAN_CUDA_REASON)"
	@echo "C on device  : $(or $(OCEAN_CUSPARSE_DEVICE_C),no) (yes: a product's C gets its aijcusparse device copy on the device; no: PETSc uploads it)"
	@echo "CUDA archs   : $(if $(filter yes,$(OCEAN_HAVE_CUDA)),$(addprefix sm_,$(OCEAN_CUDA_ARCHS)),none)"
	@echo "MPI launcher : $(shell command -v mpiexec 2>/dev/null || echo not found)"
	@echo "library      : $(LIBNAME)"

# The PETSc-free core with the CUDA backend as a static archive, for clients without PETSc (the benchmark).
OCEAN_CORE_LIB := $(BUILD)/libocean_core.a
$(OCEAN_CORE_LIB): $(CORE_OBJ) $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

.PHONY: core-lib
core-lib: $(OCEAN_CORE_LIB)

# ---- tests -------------------------------------------------------------------------------------------------
TEST_CORE_BIN  := $(BUILD)/tests/test_core
TEST_PETSC_SRC := $(wildcard tests/petsc/*.c)
TEST_PETSC_BIN := $(TEST_PETSC_SRC:tests/petsc/%.c=$(BUILD)/tests/%)
EXAMPLE_SRC    := $(filter-out examples/bench_spgemm.c,$(wildcard examples/*.c))
EXAMPLE_BIN    := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)
LINK_OCEAN     := -L$(abspath $(LIBDIR)) -Wl,-rpath,$(abspath $(LIBDIR)) -lpetscocean $(PETSC_LINK) -lm

# tests/common: the one matrix generator and host reference product of every suite (C, no PETSc), linked into the
# core, GPU and PETSc tests and the benchmark programs (examples/bench_spgemm, examples/row_bins).
TEST_COMMON_H   := $(wildcard tests/common/*.h)
TEST_COMMON_OBJ := $(BUILD)/tests/common/gen.o $(BUILD)/tests/common/ref.o
$(BUILD)/tests/common/%.o: tests/common/%.c $(TEST_COMMON_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) $(CFLAGS_CORE) -c $< -o $@

$(TEST_CORE_BIN): tests/core/test_core.c $(TEST_COMMON_OBJ) $(TEST_COMMON_H) $(CORE_OBJ) $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) -Itests/common $(CFLAGS_CORE) $(filter-out %.h,$^) -o $@ $(OCEAN_CUDA_LINK) -lm

# The CUDA backend against the CPU backend (no PETSc): run by tests/run_tests.sh (gpu/all) where a CUDA device is,
# and by tests/gpu/run_gpu_tests.sh on the GPU machine.
TEST_GPU_BIN := $(BUILD)/tests/test_gpu
$(TEST_GPU_BIN): tests/gpu/test_gpu.c $(TEST_COMMON_OBJ) $(TEST_COMMON_H) $(CORE_OBJ) $(CUDA_OBJ)
	@if [ "$(OCEAN_HAVE_CUDA)" != yes ]; then echo "test-gpu needs the CUDA backend: $(OCEAN_CUDA_REASON)" >&2; exit 1; fi
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) -Itests/common -isystem $(OCEAN_CUDA_ROOT)/include $(CFLAGS_CORE) $(filter-out %.h,$^) \
	  -o $@ $(OCEAN_CUDA_LINK) -lm

.PHONY: test-gpu
test-gpu: $(TEST_GPU_BIN)

$(BUILD)/tests/%: tests/petsc/%.c $(wildcard tests/petsc/*.h) $(TEST_COMMON_OBJ) $(TEST_COMMON_H) $(LIBNAME)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) -Itests/petsc -Itests/common $(TEST_PETSC_FLAGS) $(CFLAGS_PETSC) $< $(TEST_COMMON_OBJ) -o $@ \
	  $(LINK_OCEAN)
# test_solvers solves the main job's own problems: it includes examples/elasticity.h and laplace.h, on purpose.
$(BUILD)/tests/test_solvers: TEST_PETSC_FLAGS := -Iexamples
$(BUILD)/tests/test_solvers: examples/elasticity.h examples/laplace.h

$(BUILD)/examples/%: examples/%.c $(wildcard examples/*.h) $(LIBNAME)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) $(CFLAGS_PETSC) $< -o $@ $(LINK_OCEAN)

# row_bins reads the benchmark's set: the common generator's.
$(BUILD)/examples/row_bins: examples/row_bins.c $(TEST_COMMON_OBJ) $(TEST_COMMON_H) $(LIBNAME)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) -Itests/common $(CFLAGS_PETSC) $< $(TEST_COMMON_OBJ) -o $@ $(LINK_OCEAN)

# An unmodified PETSc tutorial, built against PETSc alone: it gets our types through -dll_append.
PETSC_EXAMPLES ?= $(firstword $(wildcard $(PETSC_DIR)/share/petsc/examples/src) \
                              $(if $(wildcard $(PETSC_DIR)/src/ksp),$(PETSC_DIR)/src) \
                              $(wildcard /usr/share/petsc/*/share/petsc/examples/src))
$(BUILD)/tests/ksp_ex2: $(PETSC_EXAMPLES)/ksp/ksp/tutorials/ex2.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -w $(PETSC_SYS_INCLUDES) $< -o $@ $(PETSC_LINK) -lm

# PETSc's 3D elasticity tutorial (GAMG), the GPU issue's reference problem, the same way (run on the GPU machine).
$(BUILD)/examples/ksp_ex56: $(PETSC_EXAMPLES)/ksp/ksp/tutorials/ex56.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -w $(PETSC_SYS_INCLUDES) $< -o $@ $(PETSC_LINK) -lm

# PETSc's own tutorials whose tests tests/tutorials/run_tutorials.py runs with aijocean against aij
# (none where this PETSc installs no examples: the suite then skips them)
TUTORIAL_BIN := $(if $(PETSC_EXAMPLES),$(BUILD)/tutorials/ksp_ex45 $(BUILD)/tutorials/ksp_ex56 \
                  $(BUILD)/tutorials/snes_ex19 $(BUILD)/tutorials/snes_ex5)
$(BUILD)/tutorials/ksp_%: $(PETSC_EXAMPLES)/ksp/ksp/tutorials/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -w $(PETSC_SYS_INCLUDES) $< -o $@ $(PETSC_LINK) -lm
$(BUILD)/tutorials/snes_%: $(PETSC_EXAMPLES)/snes/tutorials/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -w $(PETSC_SYS_INCLUDES) $< -o $@ $(PETSC_LINK) -lm
OCEAN_PETSC_CONF_H := $(firstword $(foreach d,$(patsubst -I%,%,$(filter -I%,$(PETSC_CC_INCLUDES))),$(wildcard $(d)/petscconf.h)))
.PHONY: test-tutorials
# TUTORIAL_FILTER (a regex on names and arguments) and TUTORIAL_MAX_NP narrow the set
test-tutorials: $(TUTORIAL_BIN) $(LIBNAME)
	@python3 tests/tutorials/run_tutorials.py --examples $(PETSC_EXAMPLES) --bin $(BUILD)/tutorials \
	  --lib $(abspath $(LIBNAME)) --petscconf "$(OCEAN_PETSC_CONF_H)" --max-np $(or $(TUTORIAL_MAX_NP),8) \
	  $(if $(TUTORIAL_FILTER),--filter '$(TUTORIAL_FILTER)')

tests-build: $(TEST_CORE_BIN) $(TEST_PETSC_BIN) $(EXAMPLE_BIN) $(BUILD)/tests/ksp_ex2 $(BUILD)/examples/ksp_ex56
ifeq ($(OCEAN_HAVE_CUDA),yes)
tests-build: $(TEST_GPU_BIN)
endif

test: tests-build $(TUTORIAL_BIN)
	@OCEAN_PETSC_EXAMPLES=$(PETSC_EXAMPLES) OCEAN_PETSC_CONF_H=$(OCEAN_PETSC_CONF_H) bash tests/run_tests.sh

include examples/bench.mk

# ---- main job ----------------------------------------------------------------------------------------------
deps:
	@bash config/install-deps.sh

run: deps
	@$(MAKE) --no-print-directory lib $(EXAMPLE_BIN)
	@bash examples/run_main.sh $(ARGS)

clean:
	rm -rf $(BUILD) $(LIBDIR)
