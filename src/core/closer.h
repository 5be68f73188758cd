/*
 * closer.h: the one close protocol for a module that owns libuv handles.
 *
 * Such a module has `*_close(x, close_cb, ud)` (or `*_stop`): it starts closing every handle and
 * every part that closes asynchronously (a sub-module's close, a request being cancelled), and the
 * module frees itself once the last of them has reported back; close_cb(ud) runs right after, once,
 * and never from inside the `*_close` call. struct gs_closer is embedded in the module and counts:
 *
 *   void gs_x_close(struct gs_x *x, void (*close_cb)(void *ud), void *ud)
 *   {
 *           gs_closer_start(&x->closer, x_release, close_cb, ud);
 *           gs_closer_uv(&x->closer, (uv_handle_t *)&x->timer);        (its close callback counts down)
 *           gs_closer_hold(&x->closer);                                 (one more part...)
 *           gs_y_close(x->y, gs_closer_drop_cb, &x->closer);            (...whose callback counts down)
 *           gs_closer_arm(&x->closer);
 *   }
 *   static void x_release(struct gs_closer *c)
 *   {
 *           struct gs_x *x = GS_CONTAINER_OF(c, struct gs_x, closer);   (frees x, calls nothing)
 *           ...
 *           free(x);
 *   }
 *
 * Rules, checked with GS_ASSERT: gs_closer_start once; gs_closer_arm once, after start, at the end of
 * the `*_close` call, with at least one part still closing (every part completes asynchronously, so
 * close_cb cannot run inside `*_close`); a drop never below zero. Parts may be held and dropped before
 * start (a module that tracks its own closing children): the count only completes once armed.
 * Loop thread only.
 */
#ifndef GS_CORE_CLOSER_H
#define GS_CORE_CLOSER_H

#include <uv.h>

#include "core/list.h" /* GS_CONTAINER_OF, for release */

struct gs_closer {
	unsigned pending; /* parts still closing, + 1 from start until arm */
	unsigned started : 1, armed : 1;
	void (*release)(struct gs_closer *c); /* the module frees itself (GS_CONTAINER_OF); may be NULL */
	void (*cb)(void *ud);                 /* the owner's, after release; may be NULL */
	void *ud;
};

/* Zeroed memory is a valid, idle closer too. */
void gs_closer_init(struct gs_closer *c);
/* Begins closing; release(c) then cb(ud) will run once, when every part is closed (after arm). A NULL
 * release is for a module that stops here and is freed later by its owner (gs_controller_stop). */
void gs_closer_start(struct gs_closer *c, void (*release)(struct gs_closer *c), void (*cb)(void *ud), void *ud);
/* One part more is closing. */
void gs_closer_hold(struct gs_closer *c);
/* One part is closed; the last one, once armed, runs release and cb. */
void gs_closer_drop(struct gs_closer *c);
/* gs_closer_drop for a sub-module's completion callback: ud is the struct gs_closer. */
void gs_closer_drop_cb(void *ud);
/* uv_close(h) as one part (h->data is taken over: h must not be used again). */
void gs_closer_uv(struct gs_closer *c, uv_handle_t *h);
/* Every part has been started: from now on the last drop completes. */
void gs_closer_arm(struct gs_closer *c);
/* Whether gs_closer_start was called (the module is closing). */
static inline int gs_closer_closing(const struct gs_closer *c)
{
	return c->started;
}

#endif
