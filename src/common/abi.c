/* Reading and writing public structs by the caller's struct_size (abi.h). */
#include "common/abi.h"

#include <string.h>

static uint32_t struct_size_of(const void *s)
{
    uint32_t n;
    memcpy(&n, s, sizeof n); /* every sized struct begins with its uint32_t struct_size */
    return n;
}

size_t abi_caller_size(const void *caller, size_t first_size)
{
    uint32_t n = struct_size_of(caller);
    return n ? n : first_size;
}

bool abi_struct_in(void *dst, size_t lib_size, size_t first_size, const void *src)
{
    memset(dst, 0, lib_size);
    if (src) {
        size_t n = abi_caller_size(src, first_size);
        if (n < first_size)
            return false;
        for (size_t i = lib_size; i < n; i++)
            if (((const unsigned char *)src)[i])
                return false;
        memcpy(dst, src, n < lib_size ? n : lib_size);
    }
    uint32_t size = (uint32_t)lib_size;
    memcpy(dst, &size, sizeof size);
    return true;
}

void abi_struct_out(void *dst, const void *src, size_t lib_size, size_t first_size)
{
    /* Every caller's struct holds at least the first layout, so a smaller
     * (or uninitialised) struct_size still gets that much. */
    size_t n = abi_caller_size(dst, first_size);
    if (n < first_size)
        n = first_size;
    if (n > lib_size)
        n = lib_size;
    memcpy(dst, src, n);
    uint32_t size = (uint32_t)n;
    memcpy(dst, &size, sizeof size);
}
