/* cm_checksum64: see checksum.h.  Each lane takes every fourth 8-byte word
 * (w * P2 added, rotated, times P1: every bit of a word reaches the lane's
 * high bits, and the lanes run in parallel in the processor); the lanes are
 * folded, the tail taken word by word then byte by byte, the length mixed
 * in (a cut file whose prefix sums alike still differs), and a final
 * avalanche spreads every input bit over the result. */
#include "common/checksum.h"
#include "common/cursor.h"

#define CK_P1 0x9E3779B185EBCA87ull
#define CK_P2 0xC2B2AE3D27D4EB4Full
#define CK_P3 0x165667B19E3779F9ull

static uint64_t rotl(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static uint64_t lane(uint64_t acc, uint64_t w) { return rotl(acc + w * CK_P2, 31) * CK_P1; }

static uint64_t avalanche(uint64_t h)
{
    h ^= h >> 33;
    h *= CK_P2;
    h ^= h >> 29;
    h *= CK_P3;
    return h ^ (h >> 32);
}

uint64_t cm_checksum64(const void *data, size_t n)
{
    const uint8_t *p = data;
    size_t i = 0;
    uint64_t a = CK_P1 + CK_P2, b = CK_P2, c = 0, d = 0 - CK_P1;
    for (; i + 32 <= n; i += 32) {
        a = lane(a, cm_le64(p + i));
        b = lane(b, cm_le64(p + i + 8));
        c = lane(c, cm_le64(p + i + 16));
        d = lane(d, cm_le64(p + i + 24));
    }
    uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
    h = (h ^ lane(0, a)) * CK_P1 + CK_P3;
    h = (h ^ lane(0, b)) * CK_P1 + CK_P3;
    h = (h ^ lane(0, c)) * CK_P1 + CK_P3;
    h = (h ^ lane(0, d)) * CK_P1 + CK_P3;
    for (; i + 8 <= n; i += 8)
        h = rotl(h ^ lane(0, cm_le64(p + i)), 27) * CK_P1 + CK_P3;
    for (; i < n; i++)
        h = rotl(h ^ (p[i] * CK_P3), 11) * CK_P1;
    return avalanche(h ^ (uint64_t)n);
}
