/* A checksum of file contents this library wrote itself (the index's
 * sidecar), to catch a damaged or cut file before any of its fields is
 * used.  It is no defence against a forger, who can recompute any unkeyed
 * sum (what a sidecar says is checked against the trace instead), so it is
 * chosen for speed: four independent multiply-rotate lanes over 32-byte
 * stripes, about half an instruction per byte, where the keyed SipHash of
 * common/hash.h costs about three (a 15 MB sidecar: 45 M instructions, a
 * fifth of a one-second window's read of a 1 GB trace). */
#ifndef CM_CHECKSUM_H
#define CM_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* The checksum of n bytes; the same on every machine (little-endian words). */
uint64_t cm_checksum64(const void *data, size_t n);

#endif
