#ifndef CHECKLISTS_CLIBDEFLATE_SHIM_H
#define CHECKLISTS_CLIBDEFLATE_SHIM_H
/* libdeflate: whole-buffer DEFLATE, zlib (RFC 1950) and gzip formats.
   Debian: libdeflate-dev. Inflates whole frame bodies (ChecklistWire's
   FrameDeflater writes them), computes their Adler-32 and the CRC-32s, and
   compresses a snapshot's blocks into gzip members; a snapshot streamed as
   one member, and inflating snapshots, stay on zlib (CZlib). */
#include <libdeflate.h>
#endif
