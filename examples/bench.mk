# The SpGEMM benchmark (examples/bench_spgemm.c), included from the top makefile after config/cuda.mk.
#   make bench         build build/examples/bench_spgemm (host code: CUDA runtime + cuSPARSE, no PETSc)
#   make bench-run     build it and run the default set (BENCH_ARGS: extra options, e.g. --only rmat_s18_d8)
#   make bench-plot    plot build/bench/bench.csv into build/bench/bench.png (python3 with matplotlib)
# The benchmark's own rule, not the examples' pattern rule: it needs CUDA and not libpetscocean.
.PHONY: bench bench-run bench-plot

BENCH_BIN    := build/examples/bench_spgemm
BENCH_CSV    ?= build/bench/bench.csv
BENCH_PNG    ?= $(BENCH_CSV:.csv=.png)
BENCH_ARGS   ?=
# Ours (bench_ocean) is built in by default: -DOCEAN_BENCH_OURS and the core + CUDA objects as build/libocean_core.a
# (no PETSc).  BENCH_OURS=0 builds the cuSPARSE methods alone.
BENCH_OURS   ?= 1
ifeq ($(BENCH_OURS),1)
  BENCH_CPPFLAGS ?= -DOCEAN_BENCH_OURS
  BENCH_DEPS     := $(OCEAN_CORE_LIB)
  BENCH_LIBS     ?= $(OCEAN_CORE_LIB) -lstdc++
else
  BENCH_CPPFLAGS ?=
  BENCH_DEPS     :=
  BENCH_LIBS     ?=
endif
# python3 with matplotlib: the one on PATH when it has it, else Debian's (apt-get install python3-matplotlib).
BENCH_PYTHON ?= $(shell for p in python3 /usr/bin/python3; do \
                  $$p -c 'import matplotlib' 2>/dev/null && { echo $$p; break; }; done)

ifeq ($(OCEAN_HAVE_CUDA),yes)
# Its matrices and host reference product: tests/common (TEST_COMMON_OBJ, from the top makefile).
$(BENCH_BIN): examples/bench_spgemm.c $(TEST_COMMON_OBJ) $(TEST_COMMON_H) include/ocean.h $(BENCH_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -O2 -fopenmp -std=c99 -Wall -Wextra -Iinclude -Itests/common -I$(OCEAN_CUDA_ROOT)/include $(BENCH_CPPFLAGS) \
	  $< $(TEST_COMMON_OBJ) -o $@ -L$(OCEAN_CUDA_LIBDIR) -Wl,-rpath,$(OCEAN_CUDA_LIBDIR) $(BENCH_LIBS) \
	  -lcusparse -lcudart -lm
else
$(BENCH_BIN):
	@echo "bench: the SpGEMM benchmark needs CUDA: $(OCEAN_CUDA_REASON)" >&2; exit 1
endif

bench: $(BENCH_BIN)

ifeq ($(OCEAN_HAVE_CUDA),yes)
# the test suite reads the Galerkin benchmark's inputs with it (--list: host only, no GPU)
tests-build: $(BENCH_BIN)
endif

bench-run: $(BENCH_BIN)
	$(BENCH_BIN) --csv $(BENCH_CSV) $(BENCH_ARGS)

bench-plot:
	@test -n "$(BENCH_PYTHON)" || \
	  { echo "bench-plot: no python3 with matplotlib (apt-get install -y python3-matplotlib)" >&2; exit 1; }
	$(BENCH_PYTHON) examples/plot_bench.py $(BENCH_CSV) $(BENCH_PNG)
