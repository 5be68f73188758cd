/*
 * decode_scalar.h: the scalars both decoders read (decode_scalar.c): Kubernetes quantities, resource
 * names, RFC 3339 times. No I/O, no cJSON.
 */
#ifndef GS_K8S_DECODE_SCALAR_H
#define GS_K8S_DECODE_SCALAR_H

#include <stddef.h>
#include <stdint.h>

#include "sched/objects.h"

/*
 * A Kubernetes quantity ("4", "1k", "2Ki", "500m", "1e3") as a whole number, rounded up as
 * resource.Quantity.Value() does. Negative or over INT64_MAX is -ERANGE; bad syntax -EINVAL.
 */
int gs_decode_quantity(const char *s, int64_t *out);

/*
 * The same quantity times 1000, rounded up, as resource.Quantity.MilliValue() does: cpu in millicores
 * ("500m" is 500, "2" is 2000, "0.1" is 100, "1u" is 1). Errors as gs_decode_quantity.
 */
int gs_decode_quantity_milli(const char *s, int64_t *out);

/* What a name in a resource list (requests, overhead, allocatable) stands for. */
enum gs_res_kind { GS_RES_CPU, GS_RES_MEMORY, GS_RES_EPHEMERAL, GS_RES_PODS, GS_RES_EXT };
enum gs_res_kind gs_decode_res_kind(const char *name, size_t n);

/*
 * One entry of a resource list, for both decoders: qty parsed for kind k (cpu in millicores, the rest
 * rounded up to whole units) into *v, and stored in out's field unless k is GS_RES_EXT (the caller
 * keeps extended resources by name). Errors as gs_decode_quantity.
 */
int gs_decode_res_set(struct gs_resources *out, enum gs_res_kind k, const char *qty, int64_t *v);

/* RFC 3339 ("2024-05-01T10:20:30Z", fractions and +hh:mm offsets too) -> ms since the epoch. */
int gs_decode_time(const char *s, int64_t *ms);

#endif
