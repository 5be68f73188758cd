/*
 * decode_items.c: errors and list items, the same for both encodings (decode_items.h).
 */
#include "k8s/decode_items.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

int gs_decode__vfail(char *err, size_t errlen, const char *what, const char *fmt, va_list ap)
{
	char msg[384];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err && errlen)
		snprintf(err, errlen, "%s%s%s", what, what[0] ? ": " : "", msg);
	return -EINVAL;
}

int gs_decode__nomem(char *err, size_t errlen, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: out of memory", what[0] ? what : "decode");
	return -ENOMEM;
}

int gs_decode__deliver(int rc, enum gs_obj_kind kind, struct gs_pod_obj *pod, struct gs_node_obj *node,
		       gs_decode_item_cb cb, void *ud)
{
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		return 1;
	rc = cb(kind, kind == GS_OBJ_POD ? (const void *)pod : (const void *)node, ud);
	if (kind == GS_OBJ_POD)
		gs_pod_obj_free(pod);
	else
		gs_node_obj_free(node);
	return rc;
}

int gs_decode__item_outcome(int r, const char *what, int idx, const char *ierr, unsigned *nskip, char *err,
			    size_t errlen)
{
	if (r == 0)
		return 0;
	if (r > 0) {
		(*nskip)++;
		gs_log_warn("%s: item %d skipped: %s", what, idx, ierr);
		return 0;
	}
	if (err && errlen) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "%s: out of memory", what);
		else
			snprintf(err, errlen, "%s: item %d: stopped by the caller (%d)", what, idx, r);
	}
	return r;
}

int gs_decode__stream_outcome(int r, enum gs_obj_kind kind, const char *ierr, unsigned *skipped)
{
	if (r <= 0)
		return r;
	gs_log_warn("%s list item skipped: %s", kind == GS_OBJ_POD ? "pod" : "node", ierr);
	(*skipped)++;
	return 0;
}

void gs_decode__cuda_add(struct gs_decode__cuda_fold *f, int state, const char *val, size_t len)
{
	f->n++;
	if (state == 0) {
		f->n_unset++;
	} else if (state == 2) {
		f->n_other++;
	} else if (!f->value) {
		f->value = val;
		f->value_len = len;
	} else if (f->value_len != len || memcmp(f->value, val, len) != 0) {
		f->differ = 1;
	}
}

int gs_decode__containers_done(struct gs_pod_obj *out, const struct gs_decode__cuda_fold *f)
{
	if (out->n_host_ports == 0) {
		free(out->host_ports);
		out->host_ports = NULL;
	}
	out->n_containers = f->n;
	if (f->n_unset == f->n) {
		out->cuda_state = GS_CUDA_UNSET;
	} else if (f->n_unset == 0 && f->n_other == 0 && !f->differ) {
		out->cuda_state = GS_CUDA_SAME;
		if (!(out->cuda_value = strndup(f->value, f->value_len)))
			return -ENOMEM;
	} else {
		out->cuda_state = GS_CUDA_MIXED;
	}
	return 0;
}

int gs_decode__sidecar(struct gs_pod_obj *out, int i)
{
	GS_ASSERT(i >= 0 && i < out->n_init);
	if (!out->init_sidecar && !(out->init_sidecar = calloc((size_t)out->n_init, 1)))
		return -ENOMEM;
	out->init_sidecar[i] = 1;
	return 0;
}

struct gs_resources *gs_decode__status_slot(struct gs_pod_obj *out, int i)
{
	GS_ASSERT(i >= 0 && i < out->n_ctr);
	if (!out->ctr_status_req) {
		out->ctr_status_req = calloc((size_t)out->n_ctr, sizeof(*out->ctr_status_req));
		out->ctr_status_set = calloc((size_t)out->n_ctr, 1);
		if (!out->ctr_status_req || !out->ctr_status_set) {
			free(out->ctr_status_req);
			free(out->ctr_status_set);
			out->ctr_status_req = NULL;
			out->ctr_status_set = NULL;
			return NULL;
		}
	}
	gs_resources_free(&out->ctr_status_req[i]);
	return &out->ctr_status_req[i];
}

int gs_decode__term_reqs(struct gs_sel_term *t, int n)
{
	if (n == 0)
		return 0;
	if (!(t->reqs = calloc((size_t)n, sizeof(*t->reqs))))
		return -ENOMEM;
	t->n_reqs = n;
	return 0;
}

void gs_decode__node_failed(struct gs_node_obj *out)
{
	gs_node_obj_free(out);
	memset(out, 0, sizeof(*out));
	out->gpus = -1;
	out->gpu_capacity = -1;
}
