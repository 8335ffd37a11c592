# PETSc detection.  Order: PETSC_DIR[/PETSC_ARCH] with its petscvariables (Debian default /usr/lib/petsc),
# else pkg-config PETSc.  Sets OCEAN_PETSC_FOUND, OCEAN_PETSC_SOURCE, PETSC_CC_INCLUDES, PETSC_LINK.  A PETSC_DIR given by
# the user (environment or command line) that holds no PETSc build is an error, never a fallback to another PETSc.
OCEAN_PETSC_DIR_GIVEN := $(filter environment environment override command line,$(origin PETSC_DIR))
PETSC_DIR ?= /usr/lib/petsc
OCEAN_COMMA := ,
OCEAN_PETSC_VARIABLES := $(firstword $(wildcard $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf/petscvariables) \
                                     $(wildcard $(PETSC_DIR)/lib/petsc/conf/petscvariables))
ifneq ($(OCEAN_PETSC_VARIABLES),)
  OCEAN_PETSC_FOUND  := yes
  OCEAN_PETSC_SOURCE := $(OCEAN_PETSC_VARIABLES)
  OCEAN_PETSC_LIBDIR := $(realpath $(firstword $(wildcard $(PETSC_DIR)/$(PETSC_ARCH)/lib) $(PETSC_DIR)/lib))
  # Only what we need from petscvariables: the include flags and the external libraries.
  PETSC_CC_INCLUDES  := $(shell sed -n 's/^PETSC_CC_INCLUDES = //p' $(OCEAN_PETSC_VARIABLES))
  OCEAN_PETSC_LIBNAME := $(shell sed -n 's/^PETSC_LIB_BASIC = //p' $(OCEAN_PETSC_VARIABLES))
  OCEAN_PETSC_CC     := $(shell sed -n 's/^CC = //p' $(OCEAN_PETSC_VARIABLES))
  # libpetsc's own dependencies (CUDA, NVML, ...) are found at link time where its build found them
  OCEAN_PETSC_EXTLIB := $(shell sed -n 's/^PETSC_EXTERNAL_LIB_BASIC = //p' $(OCEAN_PETSC_VARIABLES))
  PETSC_LINK         := -L$(OCEAN_PETSC_LIBDIR) -Wl,-rpath,$(OCEAN_PETSC_LIBDIR) $(OCEAN_PETSC_LIBNAME) \
                        $(patsubst -L%,-Wl$(OCEAN_COMMA)-rpath-link$(OCEAN_COMMA)%,$(filter -L%,$(OCEAN_PETSC_EXTLIB)))
  ifeq ($(wildcard $(OCEAN_PETSC_LIBDIR)/lib$(patsubst -l%,%,$(filter -l%,$(firstword $(OCEAN_PETSC_LIBNAME)))).*),)
    OCEAN_PETSC_FOUND  := no
    OCEAN_PETSC_SOURCE := not usable: $(OCEAN_PETSC_VARIABLES) names $(OCEAN_PETSC_LIBNAME), which is not in $(or $(OCEAN_PETSC_LIBDIR),$(PETSC_DIR)/$(PETSC_ARCH)/lib) (PETSc not built?)
  endif
else ifneq ($(OCEAN_PETSC_DIR_GIVEN),)
  OCEAN_PETSC_FOUND  := no
  OCEAN_PETSC_SOURCE := not found: no lib/petsc/conf/petscvariables under PETSC_DIR=$(PETSC_DIR) PETSC_ARCH=$(PETSC_ARCH)
else ifeq ($(shell pkg-config --exists PETSc 2>/dev/null && echo yes),yes)
  OCEAN_PETSC_FOUND  := yes
  OCEAN_PETSC_SOURCE := pkg-config PETSc
  PETSC_CC_INCLUDES  := $(shell pkg-config --cflags PETSc)
  OCEAN_PETSC_LIBDIR := $(shell pkg-config --variable=libdir PETSc)
  OCEAN_PETSC_CC     := $(shell pkg-config --variable=ccompiler PETSc)
  PETSC_LINK         := $(shell pkg-config --libs PETSc) -Wl,-rpath,$(OCEAN_PETSC_LIBDIR)
else
  OCEAN_PETSC_FOUND  := no
  OCEAN_PETSC_SOURCE := not found (set PETSC_DIR/PETSC_ARCH, or install petsc-dev)
endif
OCEAN_PETSC_VERSION_H := $(firstword $(foreach d,$(patsubst -I%,%,$(filter -I%,$(PETSC_CC_INCLUDES))),$(wildcard $(d)/petscversion.h)))
OCEAN_PETSC_VERSION := $(if $(OCEAN_PETSC_VERSION_H),$(shell awk '/define PETSC_VERSION_(MAJOR|MINOR|SUBMINOR)[ \t]/{v=v (v==""?"":".") $$3} END{print v}' $(OCEAN_PETSC_VERSION_H)),unknown)
