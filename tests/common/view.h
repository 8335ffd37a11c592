/* view.h - a GenCSR (gen.h) as the library's OceanCSR (include/ocean.h), for the programs that call the core API. */
#ifndef OCEAN_TEST_VIEW_H
#define OCEAN_TEST_VIEW_H

#include "gen.h"
#include "ocean.h"
#include <string.h>

static inline OceanCSR GenView(const GenCSR *M)
{
  OceanCSR c;
  memset(&c, 0, sizeof(c)); /* values_id 0: the values are always uploaded (tests change them in place) */
  c.nrows        = M->nrows;
  c.ncols        = M->ncols;
  c.rowptr       = M->rowptr;
  c.colidx       = M->colidx;
  c.values       = M->values;
  c.structure_id = M->id;
  return c;
}

#endif
