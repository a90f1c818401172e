/* The trace header's clock as readers take it.  TraceEvent places every
 * event on the calendar: DateTime(SyncTimeUTC) + (timestamp - SyncTimeQPC) /
 * QPCFrequency, and a DateTime holds the years 1 to 9999 only, so a zero
 * SYSTEMTIME (0000-00-00) fails every such stream and an event too far from
 * the sync time fails its read.  The writer fills a valid default sync time
 * and refuses what would fall off that calendar. */
#include "write/writer_internal.h"
#include "common/sat.h"

#include <string.h>

/* Days from 0001-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_year1(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = y / 400, yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 306;
}

static bool leap(unsigned y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

bool wr_clock_valid(const nt_systemtime *t)
{
    static const unsigned char mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (t->year < 1601 || t->year > 9999 || t->month < 1 || t->month > 12 || t->day < 1 ||
        t->day > mdays[t->month - 1] || (t->month == 2 && t->day == 29 && !leap(t->year)))
        return false;
    return t->hour < 24 && t->minute < 60 && t->second < 60 && t->milliseconds < 1000;
}

void wr_clock_defaults(nt_writer_options *o)
{
    static const nt_systemtime zero;
    if (memcmp(&o->sync_time_utc, &zero, sizeof zero) == 0) /* 1970-01-01 00:00:00, a Thursday */
        o->sync_time_utc = (nt_systemtime){ 1970, 1, 4, 1, 0, 0, 0, 0 };
}

void wr_clock_range(const nt_writer_options *o, int64_t *lo, int64_t *hi)
{
    const nt_systemtime *t = &o->sync_time_utc;
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    if (!wr_clock_valid(t) || o->qpc_frequency <= 0) /* refused elsewhere */
        return;
    int64_t sync_s = days_from_year1(t->year, t->month, t->day) * 86400 + t->hour * 3600 + t->minute * 60 + t->second;
    int64_t end_s = days_from_year1(10000, 1, 1) * 86400 - 1; /* 9999-12-31T23:59:59 */
    int64_t f = o->qpc_frequency;
    /* ticks from the sync to the calendar's ends, saturating; a second short at each end for rounding */
    int64_t before = (sync_s - 1) > INT64_MAX / f ? INT64_MAX : (sync_s - 1) * f;
    int64_t after = (end_s - sync_s - 1) > INT64_MAX / f ? INT64_MAX : (end_s - sync_s - 1) * f;
    *lo = cm_sat_sub(o->sync_qpc, before < 0 ? 0 : before);
    *hi = cm_sat_add(o->sync_qpc, after < 0 ? 0 : after);
    /* and timestamp - SyncTimeQPC must fit an int64 */
    int64_t lo_fit = cm_sat_add(o->sync_qpc, INT64_MIN), hi_fit = cm_sat_add(o->sync_qpc, INT64_MAX);
    if (*lo < lo_fit)
        *lo = lo_fit;
    if (*hi > hi_fit)
        *hi = hi_fit;
}
