/*
 * sched_ledger.c: the device ledger, which devices of a node the maps give to which pods, grouped by
 * owner (sched_int.h, struct gs_sched__dev), and the comma-separated lists devices and names come in.
 * See sched_ledger.h and docs/sched.md ("The device ledger").
 */
#include "sched/sched_ledger.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sched/sched_node.h"

const char *gs_sched__holder_shown(const char *holder, const char *viewer)
{
	const char *hs = strchr(holder, '/'), *vs = strchr(viewer, '/');
	if (hs && vs && hs - holder == vs - viewer && memcmp(holder, viewer, (size_t)(hs - holder)) == 0)
		return holder;
	return GS_SCHED_OTHER_NS;
}

const char *gs_sched__next_dev(const char *p, size_t *len)
{
	const char *c = strchr(p, ',');
	*len = c ? (size_t)(c - p) : strlen(p);
	return c ? c + 1 : p + *len;
}

int gs_sched__listed(const char *list, const char *name, size_t len)
{
	for (const char *p = list; p && *p;) {
		size_t l;
		const char *item = p;
		p = gs_sched__next_dev(p, &l);
		while (l && (*item == ' ' || *item == '\t'))
			item++, l--;
		while (l && (item[l - 1] == ' ' || item[l - 1] == '\t'))
			l--;
		if (l == len && memcmp(item, name, len) == 0)
			return 1;
	}
	return 0;
}

/* ---- the ledger ---------------------------------------------------------------------------------- */

static struct gs_sched__bucket *bucket_of(struct gs_sched__dev *d, const char *owner)
{
	struct gs_list *l;
	GS_LIST_FOREACH(l, &d->owners) {
		struct gs_sched__bucket *b = GS_CONTAINER_OF(l, struct gs_sched__bucket, link);
		if (strcmp(b->owner, owner) == 0)
			return b;
	}
	return NULL;
}

void gs_sched__ledger_add(struct gs_sched *s, struct gs_sched__node *n, struct gs_sched__hold *h, const char *dev,
			  size_t dlen, const char *owner, int shared)
{
	struct gs_sched__dev *d = gs_hmap_get(&n->ledger, dev, dlen);
	struct gs_sched__bucket *b;

	if (!d) {
		d = gs_xmalloc(sizeof(*d) + dlen + 1);
		gs_list_init(&d->owners);
		d->n_owners = d->n = d->n_hidden = 0;
		memcpy(d->name, dev, dlen);
		d->name[dlen] = '\0';
		gs_sched__hmap_put(&n->ledger, d->name, d);
		s->devs_held++;
	}
	if (!(b = bucket_of(d, owner))) {
		size_t ol = strlen(owner);
		b = gs_xmalloc(sizeof(*b) + ol + 1);
		gs_list_init(&b->shared);
		gs_list_init(&b->solo);
		b->n = 0;
		memcpy(b->owner, owner, ol + 1);
		gs_list_insert_tail(&d->owners, &b->link);
		if (++d->n_owners == 2)
			s->devs_shared++;
	}
	gs_list_insert_tail(shared ? &b->shared : &b->solo, &h->link);
	h->bucket = b;
	h->dev = d;
	b->n++;
	d->n++;
}

void gs_sched__ledger_del(struct gs_sched *s, struct gs_sched__node *n, struct gs_sched__hold *h)
{
	struct gs_sched__bucket *b = h->bucket;
	struct gs_sched__dev *d = h->dev;

	gs_list_remove(&h->link);
	d->n--;
	if (--b->n == 0) {
		gs_list_remove(&b->link);
		free(b);
		if (d->n_owners-- == 2)
			s->devs_shared--;
	}
	if (d->n == 0) {
		GS_ASSERT(d->n_owners == 0);
		gs_hmap_del_str(&n->ledger, d->name, NULL);
		free(d);
		s->devs_held--;
	}
}

void gs_sched__ledger_free(struct gs_sched__node *n)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&n->ledger, &it)) {
		struct gs_sched__dev *d = it.val;
		while (!gs_list_empty(&d->owners)) {
			struct gs_list *l = gs_list_first(&d->owners);
			gs_list_remove(l);
			free(GS_CONTAINER_OF(l, struct gs_sched__bucket, link));
		}
		free(d);
	}
	gs_hmap_free(&n->ledger);
}

/* The first hold of head whose use is not set aside by a preemption's what-if (sched_use.h). */
static const struct gs_sched__hold *first_shown(const struct gs_sched__dev *d, const struct gs_list *head)
{
	const struct gs_list *l;

	if (!d->n_hidden) /* always, but within sched_preempt.c */
		return gs_list_empty(head) ? NULL : GS_CONTAINER_OF(gs_list_first(head), struct gs_sched__hold, link);
	GS_LIST_FOREACH(l, head) {
		const struct gs_sched__hold *h = GS_CONTAINER_OF(l, struct gs_sched__hold, link);
		if (!h->use->hidden)
			return h;
	}
	return NULL;
}

const struct gs_sched__hold *gs_sched__dev_conflict(const struct gs_sched__dev *d, const char *owner, int shared)
{
	const struct gs_sched__hold *h;
	const struct gs_list *l;
	GS_LIST_FOREACH(l, &d->owners) {
		const struct gs_sched__bucket *b = GS_CONTAINER_OF(l, struct gs_sched__bucket, link);
		if (strcmp(b->owner, owner) == 0)
			continue;
		if ((h = first_shown(d, &b->solo)) != NULL)
			return h;
		if (!shared && (h = first_shown(d, &b->shared)) != NULL)
			return h;
	}
	return NULL;
}

void gs_sched__dev_holders(const struct gs_sched__node *n, const char *dev, size_t len,
			   void (*cb)(const struct gs_sched__use *u, int shared, void *ud), void *ud)
{
	const struct gs_sched__dev *d = gs_hmap_get(&n->ledger, dev, len);

	if (!d)
		return;
	const struct gs_list *l;
	GS_LIST_FOREACH(l, &d->owners) {
		const struct gs_sched__bucket *b = GS_CONTAINER_OF(l, struct gs_sched__bucket, link);
		for (int sh = 0; sh < 2; sh++) {
			const struct gs_list *head = sh ? &b->shared : &b->solo, *h;
			GS_LIST_FOREACH(h, head)
				cb(GS_CONTAINER_OF(h, struct gs_sched__hold, link)->use, sh, ud);
		}
	}
}
