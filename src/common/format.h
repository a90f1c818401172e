/* NetTrace format constants: the numbers the reader (src/parse), the writer
 * (src/write) and the test encoders (tests/support) must agree on, named
 * once.  What each means is in ../shared/docs/nettrace-format.md; the
 * section is given beside each group. */
#ifndef CM_FORMAT_H
#define CM_FORMAT_H

#include "nettrace.h"

#include <stdbool.h>
#include <stdint.h>

/* The stream's first bytes, both versions (section 3.1). */
#define CM_FMT_MAGIC "Nettrace"
#define CM_FMT_MAGIC_LEN 8
/* V4/V5: FastSerialization header after the magic, with its length before it. */
#define CM_FMT_FS_HEADER "!FastSerialization.1"
#define CM_FMT_FS_HEADER_LEN 20

/* FastSerialization object tags, V4/V5 (section 3.2). */
enum {
    CM_TAG_NULL_REFERENCE = 0x01,       /* also the end of the stream where an object would start */
    CM_TAG_BEGIN_OBJECT = 0x04,         /* NetPerf (V3) streams' objects start with it (never read further) */
    CM_TAG_BEGIN_PRIVATE_OBJECT = 0x05, /* an object (and its type) starts */
    CM_TAG_END_OBJECT = 0x06            /* ends a type header and every object */
};

/* V4/V5 metadata tags after the V1 field list (section 6): kind byte values. */
enum { CM_META_TAG_OPCODE = 1, CM_META_TAG_V2PARAMS = 2 };

/* Event block header flags (both versions): bit 0 = compressed headers. */
#define CM_EVENT_BLOCK_COMPRESSED 0x1u

/* A compressed event header's flags byte: which fields follow it (section 5.2). */
enum {
    PS_HDR_METADATA_ID = 0x01,
    PS_HDR_CAPTURE_THREAD_AND_SEQUENCE = 0x02, /* sequence delta, capture thread, processor */
    PS_HDR_THREAD_ID = 0x04,
    PS_HDR_STACK_ID = 0x08,
    PS_HDR_ACTIVITY_ID = 0x10,                 /* V6: the label list id */
    PS_HDR_RELATED_ACTIVITY_ID = 0x20,         /* V4/V5 only */
    PS_HDR_SORTED = 0x40,
    PS_HDR_PAYLOAD_SIZE = 0x80
};
/* MetadataId's bit 31 in a blob header: the runtime sets it when the event is NOT sorted. */
#define PS_HDR_NOT_SORTED_BIT 0x80000000u

/* V6 block header: BlockSize in the low 24 bits, the kind in the top byte. */
#define CM_V6_BLOCK_SIZE_MASK 0xFFFFFFu
#define CM_V6_BLOCK_KIND_SHIFT 24

/* V6 block kinds (section 13). */
typedef enum cm_v6_block_kind {
    CM_V6_END_OF_STREAM = 0,
    CM_V6_TRACE = 1,
    CM_V6_EVENT = 2,
    CM_V6_METADATA = 3,
    CM_V6_SEQUENCE_POINT = 4,
    CM_V6_STACK = 5,
    CM_V6_THREAD = 6,
    CM_V6_REMOVE_THREAD = 7,
    CM_V6_LABEL_LIST = 8
} cm_v6_block_kind;
#define CM_V6_BLOCK_KIND_MAX CM_V6_LABEL_LIST /* kinds above are skipped */

/* V6 sequence point flags. */
#define CM_V6_SP_FLUSH_THREADS 0x1u
#define CM_V6_SP_FLUSH_METADATA 0x2u

/* V6 label kinds in a LabelList block; the kind byte's bit 7 marks the last
 * label of a list.  nettrace_writer.h's public nt_label_kind has the same
 * values. */
enum {
    CM_V6_LABEL_ACTIVITY_ID = 1,         /* GUID */
    CM_V6_LABEL_RELATED_ACTIVITY_ID = 2, /* GUID */
    CM_V6_LABEL_TRACE_ID = 3,            /* 16 bytes */
    CM_V6_LABEL_SPAN_ID = 4,             /* u64 */
    CM_V6_LABEL_STRING = 5,              /* key string, value string */
    CM_V6_LABEL_INT = 6,                 /* key string, value varint64 */
    CM_V6_LABEL_OPCODE = 7,              /* u8, overrides the metadata */
    CM_V6_LABEL_KEYWORDS = 8,            /* u64, overrides the metadata */
    CM_V6_LABEL_LEVEL = 9,               /* u8, overrides the metadata */
    CM_V6_LABEL_VERSION = 10             /* u8, overrides the metadata */
};
#define CM_V6_LABEL_LAST_IN_LIST 0x80u
#define CM_V6_LABEL_KIND_MASK 0x7Fu

/* V6 optional metadata entries after a metadata row's fields (kind 2 unused). */
enum {
    CM_V6_META_OPCODE = 1,        /* u8 */
    CM_V6_META_KEYWORDS = 3,      /* u64 */
    CM_V6_META_MESSAGE = 4,       /* string */
    CM_V6_META_DESCRIPTION = 5,   /* string */
    CM_V6_META_KEY_VALUE = 6,     /* string, string */
    CM_V6_META_PROVIDER_GUID = 7, /* 16 bytes */
    CM_V6_META_LEVEL = 8,         /* u8 */
    CM_V6_META_VERSION = 9        /* u8 */
};

/* V6 thread block row entries. */
enum {
    CM_V6_THREAD_NAME = 1,       /* string */
    CM_V6_THREAD_OS_PID = 2,     /* varuint64 */
    CM_V6_THREAD_OS_TID = 3,     /* varuint64 */
    CM_V6_THREAD_KEY_VALUE = 4   /* string, string */
};

/* Field types whose encoding is followed by an element type: the arrays of
 * V4/V5 V2Params (Array) and V6 (Array, FixedArray, RelLoc, DataLoc). */
static inline bool cm_type_has_element(uint32_t type)
{
    return type == NT_TYPE_ARRAY || type == NT_TYPE_FIXED_ARRAY || type == NT_TYPE_RELLOC ||
           type == NT_TYPE_DATALOC;
}

#endif
