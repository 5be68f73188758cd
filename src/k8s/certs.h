/*
 * certs.h: the webhook's self-signed mode (--webhook-self-signed), for clusters without cert-manager.
 *
 * One CA and one ECDSA P-256 serving certificate for the webhook Service's DNS names
 * (SERVICE, SERVICE.NS, SERVICE.NS.svc, SERVICE.NS.svc.cluster.local) live in a Secret
 * (data tls.crt, tls.key, ca.crt), so every replica serves the same pair and a restart keeps it. The MutatingWebhookConfiguration named by config_name gets the CA as the
 * caBundle of every webhook in it.
 *
 * The cycle, on the loop, with the apiserver client:
 *   GET the Secret: a pair valid for longer than renew_before_s is used as it is; an empty, broken or
 *   expiring one is replaced (PUT of the object as read, with its resourceVersion: only those three data
 *   keys change; its type, labels and annotations stay as the installer shipped them, and the fields
 *   other managers own stay theirs), a missing Secret is created (POST, type kubernetes.io/tls). A
 *   409 means another replica wrote first: start over and take theirs.
 *   GET the MutatingWebhookConfiguration, set caBundle = new CA + previous CA (both trusted while
 *   replicas switch), PUT when it changed. Only then on_pair runs with the pair to serve, so the
 *   apiserver trusts a certificate before anyone serves it.
 *   Check again every GS_CERTS_CHECK_MS (and sooner if renewal is due sooner); failures retry with a
 *   jittered backoff, logged. A missing MutatingWebhookConfiguration is a warning, not a stop.
 *
 * RBAC (deploy/rbac.yaml): secrets get/update on this Secret's name and create in the namespace
 * (create cannot be limited by name: ship the Secret in the manifests, type Opaque with no data, to
 * avoid granting it; with no data there, an installer that applies it again, `helm upgrade` by
 * server-side apply included, neither wipes the pair nor conflicts with its writer),
 * mutatingwebhookconfigurations get/update on config_name.
 */
#ifndef GS_K8S_CERTS_H
#define GS_K8S_CERTS_H

#include <stdint.h>
#include <uv.h>

#include "k8s/kube.h"

#define GS_CERTS_CHECK_MS       (60 * 60 * 1000)    /* look at the Secret hourly */
#define GS_CERTS_VALIDITY_S     (365LL * 24 * 3600) /* serving certificate lifetime */
#define GS_CERTS_RENEW_BEFORE_S (60LL * 24 * 3600)  /* renew with 60 days left */

/* cert and key are PEM, NUL-terminated, valid during the call. not_after: the leaf's expiry. */
typedef void (*gs_certs_pair_cb)(const char *cert, const char *key, int64_t not_after, void *ud);

struct gs_certs_opts {
	const char *ns;           /* the Secret's and the Service's namespace */
	const char *secret;       /* the Secret's name */
	const char *service;      /* the webhook Service's name (DNS names of the certificate) */
	const char *config_name;  /* the MutatingWebhookConfiguration to patch */
	int64_t validity_s;       /* 0: GS_CERTS_VALIDITY_S */
	int64_t renew_before_s;   /* 0: GS_CERTS_RENEW_BEFORE_S */
	gs_certs_pair_cb on_pair; /* each time a different pair is to be served (first time included) */
	/*
	 * Asked before making and writing a new pair (the Secret is missing, broken or due for renewal):
	 * with leader election only the leader writes; the others check again every
	 * GS_CERTS_FOLLOWER_MS and serve what the leader stores. NULL: always.
	 */
	int (*may_renew)(void *ud);
	void *ud;
};

#define GS_CERTS_FOLLOWER_MS 3000

struct gs_certs;

/* Starts the cycle. All strings are copied. 0 or -EINVAL. on_pair never runs from inside. */
int gs_certs_start(uv_loop_t *loop, struct gs_kube *kube, const struct gs_certs_opts *o, struct gs_certs **out);

/* Runs the cycle again now (leadership was won: a renewal may be ours to do). */
void gs_certs_poke(struct gs_certs *c);

/* Stops the cycle; c is freed once its timer is closed and its request (if any) answered or cancelled
 * (the kube client must still be open), then close_cb (may be NULL) runs, never from inside. */
void gs_certs_close(struct gs_certs *c, void (*close_cb)(void *ud), void *ud);

#endif
