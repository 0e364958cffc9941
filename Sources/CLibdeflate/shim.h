#ifndef CHECKLISTS_CLIBDEFLATE_SHIM_H
#define CHECKLISTS_CLIBDEFLATE_SHIM_H
/* libdeflate: whole-buffer DEFLATE, zlib (RFC 1950) and gzip formats.
   Debian: libdeflate-dev. Inflates whole frame bodies (ChecklistWire's
   FrameDeflater writes them) and computes their Adler-32; the streaming gzip
   snapshots stay on zlib (CZlib). */
#include <libdeflate.h>
#endif
