/*
 * sched_ledger.h: the device ledger (sched_ledger.c), above sched_node.h: for each node, which of its
 * devices the maps give to which pods, grouped by owner (sched_int.h, struct gs_sched__dev and
 * struct gs_sched__bucket), and the comma-separated lists devices, resource names and namespaces are
 * written in. Every hold belongs to a use (sched_use.h), which adds and removes it.
 *
 * Invariants: a device is in n->ledger exactly while it has a hold (counted in s->devs_held), a bucket
 * in dev->owners exactly while it has a hold, and s->devs_shared counts the devices with two owners or
 * more.
 */
#ifndef GS_SCHED_SCHED_LEDGER_H
#define GS_SCHED_SCHED_LEDGER_H

#include "sched/sched_int.h"

/* Devices of a canonical list ("0,1") one at a time: the next one's length in *len; returns what follows. */
const char *gs_sched__next_dev(const char *p, size_t *len);
/* 1 when name (len bytes) is one of the comma-separated items of list (blanks around an item ignored;
 * NULL or "" lists nothing): devices ("0,1"), resource names, namespaces. */
int gs_sched__listed(const char *list, const char *name, size_t len);

/*
 * How a message read in the namespace of the pod viewer ("ns/name") names the pod holder ("ns/name"):
 * holder itself when both are of one namespace, else GS_SCHED_OTHER_NS. Wait messages become events and
 * conditions in the waiting pod's namespace, whose tenant need not learn other namespaces' pods (issue
 * 36); /debug and explain's own tables, behind their readers' rights, keep the names.
 */
#define GS_SCHED_OTHER_NS "a pod of another namespace"
const char *gs_sched__holder_shown(const char *holder, const char *viewer);

/* Adds hold h of device dev (dlen bytes) of n for owner (sharing or not) to the ledger. */
void gs_sched__ledger_add(struct gs_sched *s, struct gs_sched__node *n, struct gs_sched__hold *h, const char *dev,
			  size_t dlen, const char *owner, int shared);
/* Takes hold h out of n's ledger (the device leaves the ledger with its last hold). */
void gs_sched__ledger_del(struct gs_sched *s, struct gs_sched__node *n, struct gs_sched__hold *h);
/* Frees n's whole ledger, whatever still holds it (the engine is being freed; counts not kept). */
void gs_sched__ledger_free(struct gs_sched__node *n);
/* The hold to name when a pod of owner (sharing or not) may not take device d, or NULL when it may. */
const struct gs_sched__hold *gs_sched__dev_conflict(const struct gs_sched__dev *d, const char *owner, int shared);
/* Calls cb for every pod holding device dev (len bytes) of n, solo holders of an owner before sharing ones. */
void gs_sched__dev_holders(const struct gs_sched__node *n, const char *dev, size_t len,
			   void (*cb)(const struct gs_sched__use *u, int shared, void *ud), void *ud);

#endif
