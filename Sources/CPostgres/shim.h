#ifndef CHECKLISTS_CPOSTGRES_SHIM_H
#define CHECKLISTS_CPOSTGRES_SHIM_H
/* libpq from Debian's libpq-dev; the include path comes from pkg-config
   (libpq.pc: -I/usr/include/postgresql). */
#include <libpq-fe.h>

/* PG_DIAG_SQLSTATE is a macro over a character constant; Swift imports
   neither reliably. */
static inline int cpostgres_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
#endif
