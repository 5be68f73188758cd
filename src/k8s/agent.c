/*
 * agent.c: the node agent's pure parts (agent.h). Sets are small (a node's GPUs, a few dozen at
 * most), so lookups are linear.
 */
#include "k8s/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/log.h"

int gs_agent_resource_match(const char *list, const char *resource)
{
	return gs_inuse_resource_match(list, resource);
}

void gs_agent_devs_free(struct gs_agent_devs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->devs[i].resource);
		free((char *)s->devs[i].id);
		free((char *)s->devs[i].holder);
	}
	free(s->devs);
	memset(s, 0, sizeof *s);
}

long gs_agent_devs_find(const struct gs_agent_devs *s, const char *resource, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->devs[i].id, id) == 0 && strcmp(s->devs[i].resource, resource) == 0)
			return (long)i;
	return -1;
}

int gs_agent_devs_add(struct gs_agent_devs *s, const struct gs_inuse_dev *d)
{
	if (gs_agent_devs_find(s, d->resource, d->id) >= 0)
		return 0;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->devs = gs_xrealloc(s->devs, s->cap * sizeof *s->devs);
	}
	s->devs[s->n++] = (struct gs_inuse_dev){
		.resource = gs_xstrdup(d->resource),
		.id = gs_xstrdup(d->id),
		.holder = gs_xstrdup(d->holder),
	};
	GS_ASSERT(gs_agent_devs_find(s, d->resource, d->id) == (long)s->n - 1);
	return 1;
}

void gs_agent_collect(const struct gs_podres_list *l, const char *resources, struct gs_agent_devs *out,
		      size_t *conflicts, gs_agent_conflict_cb cb, void *ud)
{
	/* first[i]: the record that put out->devs[i] there, to tell one pod's repeat from another pod */
	const struct gs_podres_dev **first = NULL;
	size_t first_cap = 0;

	*conflicts = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct gs_podres_dev *r = &l->devs[i];
		if (!gs_agent_resource_match(resources, r->resource))
			continue;
		long at = gs_agent_devs_find(out, r->resource, r->id);
		if (at >= 0) {
			const struct gs_podres_dev *k = first[at];
			if (strcmp(k->ns, r->ns) != 0 || strcmp(k->pod, r->pod) != 0) {
				(*conflicts)++;
				if (cb)
					cb(k, r, ud);
			}
			continue;
		}
		char holder[2 * GS_PODRES_MAX_NAME + 2];
		snprintf(holder, sizeof holder, "%s/%s", r->ns, r->pod);
		gs_agent_devs_add(out, &(struct gs_inuse_dev){.resource = r->resource, .id = r->id, .holder = holder});
		if (out->n > first_cap) {
			first_cap = out->cap;
			first = gs_xrealloc(first, first_cap * sizeof *first);
		}
		first[out->n - 1] = r;
	}
	free(first);
}

void gs_agent_union(const struct gs_agent_devs *before, const struct gs_agent_devs *now, struct gs_agent_devs *out)
{
	for (size_t i = 0; i < now->n; i++)
		gs_agent_devs_add(out, &now->devs[i]);
	for (size_t i = 0; i < before->n; i++)
		gs_agent_devs_add(out, &before->devs[i]); /* kept only where now has no such device */
}

int gs_agent_same_data(const char *a, const char *b)
{
	const char *ra = strchr(a, '\n'), *rb = strchr(b, '\n');
	if (!ra || !rb)
		return !ra && !rb;
	return strcmp(ra, rb) == 0;
}

/* ---- the GPU index table ------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", what);
	return -EINVAL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* n hex digits (min..max of them, the count taken is the longest run up to max) at *p; -1 if fewer. */
static int64_t hexfield(const char **p, const char *end, int min, int max)
{
	int64_t v = 0;
	int k = 0;
	while (*p < end && k < max && hexval(**p) >= 0) {
		v = v * 16 + hexval(**p);
		(*p)++, k++;
	}
	return k >= min ? v : -1;
}

/* "0000:62:00.0" -> 0x0000_62_00_0 ordered as the driver orders (domain, bus, device, function). */
static int parse_bus(const char *s, const char *end, uint64_t *out)
{
	int64_t dom = hexfield(&s, end, 1, 8), bus, dev, fn;
	if (dom < 0 || s >= end || *s++ != ':')
		return -1;
	if ((bus = hexfield(&s, end, 2, 2)) < 0 || s >= end || *s++ != ':')
		return -1;
	if ((dev = hexfield(&s, end, 2, 2)) < 0 || dev > 0x1f || s >= end || *s++ != '.')
		return -1;
	if ((fn = hexfield(&s, end, 1, 1)) < 0 || fn > 7 || s != end)
		return -1;
	*out = (uint64_t)dom << 16 | (uint64_t)bus << 8 | (uint64_t)dev << 3 | (uint64_t)fn;
	return 0;
}

int gs_agent_nvinfo_parse(const char *text, size_t len, struct gs_agent_gpu *out, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	int have_uuid = 0, have_bus = 0;

	memset(out, 0, sizeof *out);
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *colon, *v, *ve;
		if (!eol)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon) {
			size_t klen = (size_t)(colon - p);
			for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
				;
			for (ve = eol; ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'); ve--)
				;
			if (klen == 8 && memcmp(p, "GPU UUID", 8) == 0) {
				size_t n = (size_t)(ve - v);
				if (have_uuid++)
					return fail(err, errlen, "GPU UUID: twice");
				if (!n || n > GS_PODRES_MAX_ID)
					return fail(err, errlen, "GPU UUID: empty or over 256 bytes");
				for (size_t i = 0; i < n; i++)
					if (v[i] <= ' ' || v[i] > '~')
						return fail(err, errlen,
							    "GPU UUID: not printable ASCII without blanks");
				memcpy(out->uuid, v, n);
				out->uuid[n] = 0;
			} else if (klen == 12 && memcmp(p, "Bus Location", 12) == 0) {
				if (have_bus++)
					return fail(err, errlen, "Bus Location: twice");
				if (parse_bus(v, ve, &out->bus) < 0)
					return fail(err, errlen, "Bus Location: not DOMAIN:BB:DD.F");
			}
		}
		p = eol + 1;
	}
	if (!have_uuid)
		return fail(err, errlen, "no GPU UUID line");
	if (!have_bus)
		return fail(err, errlen, "no Bus Location line");
	return 0;
}

static int by_bus(const void *a, const void *b)
{
	uint64_t x = ((const struct gs_agent_gpu *)a)->bus, y = ((const struct gs_agent_gpu *)b)->bus;
	return x < y ? -1 : x > y;
}

int gs_agent_nvinfo_order(struct gs_agent_gpu *gpus, size_t n, const char **ids, char *err, size_t errlen)
{
	if (n > GS_INUSE_MAX_INDEX)
		return fail(err, errlen, "more GPUs than the annotation's index table holds (64)");
	if (n)
		qsort(gpus, n, sizeof *gpus, by_bus);
	for (size_t i = 0; i < n; i++) {
		if (i && gpus[i].bus == gpus[i - 1].bus)
			return fail(err, errlen, "two GPUs on one bus location");
		for (size_t j = 0; j < i; j++)
			if (strcmp(gpus[i].uuid, gpus[j].uuid) == 0)
				return fail(err, errlen, "one GPU UUID twice");
		ids[i] = gpus[i].uuid;
	}
	return 0;
}

/* dir/name/information into buf (NUL-terminated); its length, or <0 with err. */
static ssize_t read_info(const char *dir, const char *name, char *buf, size_t cap, char *err, size_t errlen)
{
	char path[4096];
	ssize_t n, total = 0;
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s/information", dir, name) >= sizeof path)
		return snprintf(err, errlen, "%s/%s: path too long", dir, name), -ENAMETOOLONG;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	/* /proc files report size 0: read until EOF, one byte over the cap to see it passed */
	while ((n = read(fd, buf + total, cap - (size_t)total)) > 0 && (size_t)(total += n) < cap)
		;
	int e = n < 0 ? errno : 0;
	close(fd);
	if (e)
		return snprintf(err, errlen, "%s: %s", path, strerror(e)), -e;
	if ((size_t)total >= cap)
		return snprintf(err, errlen, "%s: over %d bytes", path, GS_AGENT_NVINFO_MAX), -E2BIG;
	buf[total] = 0;
	return total;
}

int gs_agent_nvinfo_read(const char *dir, struct gs_agent_gpu **gpus, size_t *n, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *buf = NULL, why[256];
	const char *ids[GS_INUSE_MAX_INDEX];
	int r = 0;

	*gpus = NULL;
	*n = 0;
	if (!d) {
		r = -errno;
		if (r != -ENOENT)
			snprintf(err, errlen, "%s: %s", dir, strerror(-r));
		return r;
	}
	buf = gs_xmalloc(GS_AGENT_NVINFO_MAX + 1);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == GS_INUSE_MAX_INDEX) {
			r = fail(err, errlen, "more GPUs than the annotation's index table holds (64)");
			break;
		}
		ssize_t len = read_info(dir, e->d_name, buf, GS_AGENT_NVINFO_MAX + 1, err, errlen);
		if (len < 0) {
			r = (int)len;
			break;
		}
		*gpus = gs_xrealloc(*gpus, (*n + 1) * sizeof **gpus);
		if ((r = gs_agent_nvinfo_parse(buf, (size_t)len, &(*gpus)[*n], why, sizeof why)) < 0) {
			snprintf(err, errlen, "%s/%s/information: %s", dir, e->d_name, why);
			break;
		}
		(*n)++;
	}
	closedir(d);
	free(buf);
	if (r == 0 && (r = gs_agent_nvinfo_order(*gpus, *n, ids, why, sizeof why)) < 0)
		snprintf(err, errlen, "%s: %s", dir, why);
	if (r < 0) {
		free(*gpus);
		*gpus = NULL;
		*n = 0;
	}
	return r;
}
