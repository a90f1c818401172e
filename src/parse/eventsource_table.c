/* The well-known EventSources' event layouts (eventsource_table.h).  Field
 * lists in payload order, pre-order with depths as metadata gives them. */
#include "parse/eventsource_table.h"

#include <string.h>

#define TPL "System.Threading.Tasks.TplEventSource"
#define METRICS "System.Diagnostics.Metrics"
#define F(n, t) { n, NT_TYPE_##t, 0, 0 }
#define F1(n, t) { n, NT_TYPE_##t, 0, 1 }
#define F2(n, t) { n, NT_TYPE_##t, 0, 2 }
#define FIELDS(a) .field_count = (uint32_t)(sizeof a / sizeof a[0]), .fields = a
#define TPL_ORIGIN F("OriginatingTaskSchedulerID", INT32), F("OriginatingTaskID", INT32)

static const nt_field task_scheduled[] = { TPL_ORIGIN, F("TaskID", INT32), F("CreatingTaskID", INT32),
                                           F("TaskCreationOptions", INT32), F("appDomain", INT32) };
static const nt_field task_started[] = { TPL_ORIGIN, F("TaskID", INT32) };
static const nt_field task_completed[] = { TPL_ORIGIN, F("TaskID", INT32), F("IsExceptional", BOOLEAN32) };
static const nt_field task_wait_begin[] = { TPL_ORIGIN, F("TaskID", INT32), F("Behavior", INT32),
                                            F("ContinueWithTaskID", INT32) };
static const nt_field await_scheduled[] = { TPL_ORIGIN, F("ContinueWithTaskId", INT32) };
static const nt_field task_id[] = { F("TaskID", INT32) };
static const nt_field operation_begin[] = { F("TaskID", INT32), F("OperationName", STRING), F("RelatedContext", INT64) };
static const nt_field operation_end[] = { F("TaskID", INT32), F("Status", INT32) };
static const nt_field operation_relation[] = { F("TaskID", INT32), F("Relation", INT32) };
static const nt_field work_begin[] = { F("TaskID", INT32), F("Work", INT32) };
static const nt_field work_end[] = { F("Work", INT32) };

#define METRIC_ID F("sessionId", STRING), F("meterName", STRING), F("meterVersion", STRING), \
                  F("instrumentName", STRING)
static const nt_field message[] = { F("Message", STRING) };
static const nt_field collection[] = { F("sessionId", STRING), F("intervalStartTime", DATETIME),
                                       F("intervalEndTime", DATETIME) };
/* What every published value begins with. */
#define METRIC_VALUE METRIC_ID, F("unit", STRING), F("tags", STRING)
static const nt_field counter_rate[] = { METRIC_VALUE, F("rate", STRING), F("value", STRING),
                                         F("instrumentId", INT32) };
static const nt_field gauge[] = { METRIC_VALUE, F("lastValue", STRING), F("instrumentId", INT32) };
static const nt_field histogram[] = { METRIC_VALUE, F("quantiles", STRING), F("count", INT32), F("sum", DOUBLE),
                                      F("instrumentId", INT32) };
static const nt_field instrument[] = { METRIC_ID, F("instrumentType", STRING), F("unit", STRING),
                                       F("description", STRING), F("instrumentTags", STRING),
                                       F("meterTags", STRING), F("meterScopeHash", STRING),
                                       F("instrumentId", INT32), F("meterTelemetrySchemaUrl", STRING) };
static const nt_field session[] = { F("sessionId", STRING) };
static const nt_field running_session[] = { F("runningSessionId", STRING) };
static const nt_field metrics_version[] = { F("Major", INT32), F("Minor", INT32), F("Patch", INT32) };

/* EventCounters: one unnamed struct holding the struct "Payload", whose
 * fields are a mean counter's or a sum (incrementing) counter's after the
 * counter's names. */
#define COUNTER_PAYLOAD F("", OBJECT), F1("Payload", OBJECT), F2("Name", STRING), F2("DisplayName", STRING)
static const nt_field counter_mean[] = {
    COUNTER_PAYLOAD, F2("Mean", DOUBLE), F2("StandardDeviation", DOUBLE), F2("Count", INT32), F2("Min", DOUBLE),
    F2("Max", DOUBLE), F2("IntervalSec", SINGLE), F2("Series", STRING), F2("CounterType", STRING),
    F2("Metadata", STRING), F2("DisplayUnits", STRING)
};
static const nt_field counter_sum[] = {
    COUNTER_PAYLOAD, F2("DisplayRateTimeScale", STRING), F2("Increment", DOUBLE), F2("IntervalSec", SINGLE),
    F2("Metadata", STRING), F2("Series", STRING), F2("CounterType", STRING), F2("DisplayUnits", STRING)
};

/* The opcodes are the metadata's (Send = 9, Start = 1, Stop = 2), as a trace's description has them. */
#define EVO(prov, id, ver, nm, op, fl) { .provider = prov, .event_id = id, .version = ver, .event_name = nm, \
                                        .opcode = op, .task_name = "", .opcode_name = "", .name = nm, \
                                        FIELDS(fl) }
#define EV(prov, id, ver, nm, fl) EVO(prov, id, ver, nm, 0, fl)

static const nt_event_desc table[] = {
    EVO(TPL, 7, 1, "TaskScheduled", 9, task_scheduled),
    EV(TPL, 8, 0, "TaskStarted", task_started),
    EV(TPL, 9, 1, "TaskCompleted", task_completed),
    EVO(TPL, 10, 3, "TaskWaitBegin", 9, task_wait_begin),
    EV(TPL, 11, 0, "TaskWaitEnd", task_started),
    EVO(TPL, 12, 0, "AwaitTaskContinuationScheduled", 9, await_scheduled),
    EV(TPL, 14, 1, "TraceOperationBegin", operation_begin),
    EV(TPL, 15, 1, "TraceOperationEnd", operation_end),
    EV(TPL, 16, 1, "TraceOperationRelation", operation_relation),
    EV(TPL, 17, 1, "TraceSynchronousWorkBegin", work_begin),
    EV(TPL, 18, 1, "TraceSynchronousWorkEnd", work_end),
    EV(TPL, 19, 0, "TaskWaitContinuationStarted", task_id),
    EV(METRICS, 1, 0, "Message", message),
    EVO(METRICS, 2, 0, "CollectionStart", 1, collection),
    EVO(METRICS, 3, 0, "CollectionStop", 2, collection),
    EV(METRICS, 4, 2, "CounterRateValuePublished", counter_rate),
    EV(METRICS, 5, 2, "GaugeValuePublished", gauge),
    EV(METRICS, 6, 2, "HistogramValuePublished", histogram),
    EV(METRICS, 7, 3, "BeginInstrumentReporting", instrument),
    EV(METRICS, 8, 3, "EndInstrumentReporting", instrument),
    EV(METRICS, 10, 0, "InitialInstrumentEnumerationComplete", session),
    EV(METRICS, 15, 0, "MultipleSessionsNotSupportedError", running_session),
    EV(METRICS, 18, 0, "Version", metrics_version),
    /* By name only (their ids are the order of a TraceLogging event's first write, not fixed). */
    EV(NULL, 0, 0, "EventCounters", counter_mean),
    EV(NULL, 0, 0, "EventCounters", counter_sum),
};

#define TABLE_SIZE (sizeof table / sizeof table[0])

const nt_event_desc *ps_es_find(const char *provider, uint32_t event_id, uint32_t version)
{
    for (size_t i = 0; i < TABLE_SIZE; i++)
        if (table[i].provider && table[i].event_id == event_id && table[i].version == version &&
            strcmp(table[i].provider, provider) == 0)
            return &table[i];
    return NULL;
}

size_t ps_es_find_named(const char *provider, const char *event_name, const nt_event_desc **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < TABLE_SIZE && n < max; i++)
        if ((!table[i].provider || strcmp(table[i].provider, provider) == 0) &&
            strcmp(table[i].event_name, event_name) == 0)
            out[n++] = &table[i];
    return n;
}
