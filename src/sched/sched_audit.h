/*
 * sched_audit.h: the engine's invariants checked from scratch (sched_audit.c), behind sched.h's
 * gs_sched_audit: every count, list, heap, index and ledger of sched_int.h recomputed and compared
 * (GS_ASSERT). It walks everything, so it is for tests and debugging: the golden transcripts run it
 * after every step. Reads the engine, never changes it.
 */
#ifndef GS_SCHED_SCHED_AUDIT_H
#define GS_SCHED_SCHED_AUDIT_H

#include "sched/sched_int.h"

void gs_sched__audit(const struct gs_sched *s);

#endif
