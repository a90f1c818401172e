/* The compiler attributes the library uses inside, all here (the public
 * API's, NT_API and NT_DEPRECATED, are in include/nettrace.h), so that a
 * compiler without them needs one change. */
#ifndef CM_COMPILER_H
#define CM_COMPILER_H

#if defined(__GNUC__)
/* Inlined whatever the optimiser thinks: per-event and per-byte steps whose call cost more than their work. */
#define CC_ALWAYS_INLINE __attribute__((always_inline))
/* Kept out of line and out of the hot path: rare branches of per-event loops. */
#define CC_SLOW __attribute__((noinline, cold))
#define CC_NOINLINE __attribute__((noinline))
/* A static function a header defines for some of its includers only. */
#define CC_UNUSED __attribute__((unused))
/* printf-style checking of a format argument (fmt: its position; args: the first variadic, 0 for a va_list). */
#define CC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
/* A hint that p will be read soon: graph walks ask for the next nodes' lines while they work on this one. */
#define CC_PREFETCH(p) __builtin_prefetch(p)
#else
#define CC_ALWAYS_INLINE
#define CC_SLOW
#define CC_NOINLINE
#define CC_UNUSED
#define CC_PRINTF(fmt, args)
#define CC_PREFETCH(p) ((void)(p))
#endif

#endif
