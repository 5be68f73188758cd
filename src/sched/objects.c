/*
 * objects.c: see objects.h. The records are plain data; freeing releases the strings and leaves the
 * record zeroed, so a second free is harmless and a freed record can be filled again.
 */
#include "sched/objects.h"

#include <stdlib.h>
#include <string.h>

void gs_pod_obj_free(struct gs_pod_obj *p)
{
	if (!p)
		return;
	free(p->uid);
	free(p->ns);
	free(p->name);
	free(p->resource_version);
	free(p->scheduler_name);
	free(p->node_name);
	free(p->map_text);
	free(p->label_pod_index);
	free(p->job_index);
	free(p->assigned);
	free(p->owner_kind);
	free(p->owner_name);
	free(p->cuda_value);
	memset(p, 0, sizeof(*p));
}

void gs_node_obj_free(struct gs_node_obj *n)
{
	if (!n)
		return;
	free(n->name);
	free(n->resource_version);
	memset(n, 0, sizeof(*n));
	n->gpus = -1;
}
