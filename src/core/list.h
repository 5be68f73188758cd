/*
 * list.h: the one intrusive doubly linked list (the shape of libuv's queue.h and Linux's list.h).
 *
 * A struct gs_list is embedded in each record that can be on a list, and one more is the head. A
 * head, and a link on no list, points at itself both ways: gs_list_init makes it so and
 * gs_list_remove leaves the removed link so, which lets gs_list_linked tell membership in O(1). The
 * record holding a link is found again with GS_CONTAINER_OF.
 *
 * Invariant (checked by gs_list_remove): for every link l on a list, l->next->prev == l and
 * l->prev->next == l. Nothing here allocates; a list owns none of its records.
 */
#ifndef GS_CORE_LIST_H
#define GS_CORE_LIST_H

#include <stddef.h>

#include "core/log.h"

/* The record of type `type` whose member `member` is at ptr. */
#define GS_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

struct gs_list {
	struct gs_list *prev, *next;
};

/* Makes h an empty head, or l a link on no list. */
static inline void gs_list_init(struct gs_list *h)
{
	h->prev = h->next = h;
}

static inline int gs_list_empty(const struct gs_list *h)
{
	return h->next == h;
}

/* Whether link l (initialized) is on a list: the same test as gs_list_empty, named for a link. */
static inline int gs_list_linked(const struct gs_list *l)
{
	return l->next != l;
}

/* Inserts l before at; with at the head: at the tail. */
static inline void gs_list_insert_before(struct gs_list *at, struct gs_list *l)
{
	l->next = at;
	l->prev = at->prev;
	at->prev->next = l;
	at->prev = l;
}

static inline void gs_list_insert_tail(struct gs_list *h, struct gs_list *l)
{
	gs_list_insert_before(h, l);
}

static inline void gs_list_insert_head(struct gs_list *h, struct gs_list *l)
{
	gs_list_insert_before(h->next, l);
}

/* Takes l off its list (l must be on one, or be self-linked); l is left self-linked. */
static inline void gs_list_remove(struct gs_list *l)
{
	GS_ASSERT(l->next->prev == l && l->prev->next == l);
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l->next = l;
}

/* The first and last links of h: h itself when h is empty. */
static inline struct gs_list *gs_list_first(const struct gs_list *h)
{
	return h->next;
}

static inline struct gs_list *gs_list_last(const struct gs_list *h)
{
	return h->prev;
}

/* for (each link l of head h, first to last); l (declared by the caller) must stay on the list. */
#define GS_LIST_FOREACH(l, h) for ((l) = (h)->next; (l) != (h); (l) = (l)->next)

/* The same where the body may remove l: n (declared by the caller) holds the next link. */
#define GS_LIST_FOREACH_SAFE(l, n, h) for ((l) = (h)->next, (n) = (l)->next; (l) != (h); (l) = (n), (n) = (l)->next)

#endif
