/*
 * podresources.c: the PodResources v1 List reply, flattened (podresources.h).
 *
 * Two passes over the same bytes: the first checks everything and counts the records and the bytes of
 * their strings, the second fills one exact allocation of each. Within a message the fields may come in
 * any order (protobuf does not promise one), so a message's own strings are read before its children
 * are walked: each level reads its message twice, which costs nothing next to a socket read.
 */
#include "k8s/podresources.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/pb.h"

struct pr_ctx {
	int fill;        /* 0: check and count; 1: fill */
	size_t n, bytes; /* records and arena bytes: counted, then used */
	size_t pods, containers;
	struct gs_podres_dev *devs;
	char *arena;
	char *err;
	size_t errlen;
	char path[160]; /* the element being read, for messages */
};

/* The strings of the message being walked, down the tree. */
struct pr_names {
	const char *ns, *pod, *container, *resource;
};

static int pr_fail(struct pr_ctx *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pr_fail(struct pr_ctx *c, int rc, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		va_list ap;
		int n = snprintf(c->err, c->errlen, "PodResources List reply: %s: ", c->path[0] ? c->path : "message");
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < c->errlen)
			vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int pr_bad(struct pr_ctx *c, const struct gs_pb *r)
{
	return pr_fail(c, -EINVAL, "malformed protobuf at byte %zu: %s", gs_pb_offset(r), r->err ? r->err : "?");
}

/* path = base + ".name[i]" (or without the index when i < 0); returns the old length to restore. */
static size_t pr_enter(struct pr_ctx *c, const char *name, long i)
{
	size_t at = strlen(c->path);
	if (i >= 0)
		snprintf(c->path + at, sizeof c->path - at, "%s%s[%ld]", at ? "." : "", name, i);
	else
		snprintf(c->path + at, sizeof c->path - at, "%s%s", at ? "." : "", name);
	return at;
}

/* A string field: checked, counted, and (when filling) copied into the arena. */
static int pr_string(struct pr_ctx *c, const struct gs_pb_field *f, const char *name, long i, size_t cap,
		     const char **out)
{
	size_t at = pr_enter(c, name, i);
	int rc = 0;
	if (f->wire != GS_PB_LEN)
		rc = pr_fail(c, -EINVAL, "%s, not a string", gs_pb_wire_name(f->wire));
	else if (f->len == 0)
		rc = pr_fail(c, -EINVAL, "empty");
	else if (f->len > cap)
		rc = pr_fail(c, -EINVAL, "%zu bytes, over the cap of %zu", f->len, cap);
	for (size_t k = 0; rc == 0 && k < f->len; k++)
		if (f->data[k] < 0x21 || f->data[k] > 0x7e)
			rc = pr_fail(c, -EINVAL, "byte 0x%02x at %zu is not printable ASCII", f->data[k], k);
	c->path[at] = '\0';
	if (rc < 0)
		return rc;
	if (c->fill) {
		char *s = c->arena + c->bytes;
		memcpy(s, f->data, f->len);
		s[f->len] = '\0';
		*out = s;
	}
	c->bytes += f->len + 1;
	return 0;
}

/* A repeated message field: checks the wire type and opens it. */
static int pr_sub(struct pr_ctx *c, const struct gs_pb_field *f, struct gs_pb *sub)
{
	if (f->wire != GS_PB_LEN)
		return pr_fail(c, -EINVAL, "%s, not a message", gs_pb_wire_name(f->wire));
	gs_pb_sub(sub, f);
	return 0;
}

static int pr_device(struct pr_ctx *c, struct gs_pb *r, struct pr_names nm)
{
	struct gs_pb_field f;
	struct gs_pb scan = *r;
	int rc, named = 0;
	long ids = 0;
	while ((rc = gs_pb_next(&scan, &f)) > 0) {
		if (f.num != 1)
			continue;
		named = 1;
		if ((rc = pr_string(c, &f, "resource_name", -1, GS_PODRES_MAX_NAME, &nm.resource)) < 0)
			return rc;
	}
	if (rc < 0)
		return pr_bad(c, &scan);
	if (!named)
		return pr_fail(c, -EINVAL, "no resource_name");
	while ((rc = gs_pb_next(r, &f)) > 0) {
		const char *id = NULL;
		if (f.num != 2)
			continue;
		if ((rc = pr_string(c, &f, "device_ids", ids++, GS_PODRES_MAX_ID, &id)) < 0)
			return rc;
		if (c->n >= GS_PODRES_MAX_DEVICES)
			return pr_fail(c, -E2BIG, "more than %d devices", GS_PODRES_MAX_DEVICES);
		if (c->fill)
			c->devs[c->n] = (struct gs_podres_dev){nm.ns, nm.pod, nm.container, nm.resource, id};
		c->n++;
	}
	return rc < 0 ? pr_bad(c, r) : 0;
}

/* Reads a message's field 1 (its name) first, then hands each field numbered child to walk. */
static int pr_named(struct pr_ctx *c, struct gs_pb *r, const char **name, const char *what, const char *child,
		    uint32_t child_num, int (*walk)(struct pr_ctx *, struct gs_pb *, struct pr_names),
		    struct pr_names nm, const char **ns)
{
	struct gs_pb_field f;
	struct gs_pb scan = *r;
	int rc, named = 0, spaced = 0;
	long i = 0;
	while ((rc = gs_pb_next(&scan, &f)) > 0) {
		if (f.num == 1) {
			named = 1;
			if ((rc = pr_string(c, &f, "name", -1, GS_PODRES_MAX_NAME, name)) < 0)
				return rc;
		} else if (f.num == 2 && ns) {
			spaced = 1;
			if ((rc = pr_string(c, &f, "namespace", -1, GS_PODRES_MAX_NAME, ns)) < 0)
				return rc;
		}
	}
	if (rc < 0)
		return pr_bad(c, &scan);
	if (!named)
		return pr_fail(c, -EINVAL, "%s without a name", what);
	if (ns && !spaced)
		return pr_fail(c, -EINVAL, "%s without a namespace", what);
	nm.pod = ns ? *name : nm.pod;
	nm.ns = ns ? *ns : nm.ns;
	nm.container = ns ? NULL : *name;
	while ((rc = gs_pb_next(r, &f)) > 0) {
		struct gs_pb sub;
		size_t at;
		if (f.num != child_num)
			continue;
		at = pr_enter(c, child, i++);
		if ((rc = pr_sub(c, &f, &sub)) < 0 || (rc = walk(c, &sub, nm)) < 0)
			return rc;
		c->path[at] = '\0';
	}
	return rc < 0 ? pr_bad(c, r) : 0;
}

static int pr_container(struct pr_ctx *c, struct gs_pb *r, struct pr_names nm)
{
	const char *name = NULL;
	c->containers++;
	return pr_named(c, r, &name, "a container", "devices", 2, pr_device, nm, NULL);
}

static int pr_pod(struct pr_ctx *c, struct gs_pb *r, struct pr_names nm)
{
	const char *name = NULL, *ns = NULL;
	c->pods++;
	return pr_named(c, r, &name, "a pod", "containers", 3, pr_container, nm, &ns);
}

static int pr_walk(struct pr_ctx *c, const void *data, size_t len)
{
	struct gs_pb r;
	struct gs_pb_field f;
	struct pr_names nm = {0};
	int rc;
	long i = 0;
	gs_pb_init(&r, data, len);
	c->n = c->bytes = c->pods = c->containers = 0;
	c->path[0] = '\0';
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		struct gs_pb sub;
		if (f.num != 1)
			continue;
		pr_enter(c, "pod_resources", i++);
		if ((rc = pr_sub(c, &f, &sub)) < 0 || (rc = pr_pod(c, &sub, nm)) < 0)
			return rc;
		c->path[0] = '\0';
	}
	return rc < 0 ? pr_bad(c, &r) : 0;
}

int gs_podres_list_decode(const void *data, size_t len, struct gs_podres_list *out, char *err, size_t errlen)
{
	struct pr_ctx c = {.err = err, .errlen = errlen};
	int rc;
	memset(out, 0, sizeof *out);
	if (err && errlen)
		err[0] = '\0';
	if ((rc = pr_walk(&c, data, len)) < 0)
		return rc;
	/* Sized by the peer: plain malloc, failing this reply only. */
	c.devs = c.n ? malloc(c.n * sizeof *c.devs) : NULL;
	c.arena = malloc(c.bytes ? c.bytes : 1);
	if ((c.n && !c.devs) || !c.arena) {
		free(c.devs);
		free(c.arena);
		return pr_fail(&c, -ENOMEM, "out of memory for %zu devices", c.n);
	}
	size_t n = c.n, bytes = c.bytes;
	c.fill = 1;
	rc = pr_walk(&c, data, len);
	GS_ASSERT(rc == 0 && c.n == n && c.bytes == bytes); /* the same bytes, read the same way */
	out->devs = c.devs;
	out->n = c.n;
	out->arena = c.arena;
	out->pods = c.pods;
	out->containers = c.containers;
	return 0;
}

void gs_podres_list_free(struct gs_podres_list *l)
{
	free(l->devs);
	free(l->arena);
	memset(l, 0, sizeof *l);
}
