/*
 * closer.c: the close protocol's counter (see closer.h).
 */
#include "core/closer.h"

#include <string.h>

#include "core/log.h"

void gs_closer_init(struct gs_closer *c)
{
	memset(c, 0, sizeof(*c));
}

void gs_closer_start(struct gs_closer *c, void (*release)(struct gs_closer *c), void (*cb)(void *ud), void *ud)
{
	GS_ASSERT(!c->started); /* closed once */
	c->started = 1;
	c->release = release;
	c->cb = cb;
	c->ud = ud;
	c->pending++; /* the *_close call itself, until arm */
}

void gs_closer_hold(struct gs_closer *c)
{
	c->pending++;
}

void gs_closer_drop(struct gs_closer *c)
{
	GS_ASSERT(c->pending > 0);
	if (--c->pending > 0 || !c->armed)
		return;
	void (*cb)(void *) = c->cb;
	void *ud = c->ud;
	if (c->release)
		c->release(c); /* frees the module, and c with it */
	if (cb)
		cb(ud);
}

void gs_closer_drop_cb(void *ud)
{
	gs_closer_drop(ud);
}

static void on_handle_closed(uv_handle_t *h)
{
	gs_closer_drop(h->data);
}

void gs_closer_uv(struct gs_closer *c, uv_handle_t *h)
{
	gs_closer_hold(c);
	h->data = c;
	uv_close(h, on_handle_closed);
}

void gs_closer_arm(struct gs_closer *c)
{
	GS_ASSERT(c->started && !c->armed);
	c->armed = 1;
	/* The start's own count: never the last, or close_cb would run inside *_close. */
	GS_ASSERT(c->pending > 1);
	c->pending--;
}
