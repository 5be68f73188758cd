/*
 * kubeconfig.h: where the apiserver is and how to authenticate to it, from a kubeconfig file or from
 * the in-cluster service account. Reads files, opens no socket.
 *
 * What is supported (the subset a daemon needs; everything else fails with a message that names it):
 *   - current-context is required, as kubectl requires it (no "only context" guess: a kubeconfig with
 *     two clusters and no current-context is ambiguous, and a wrong cluster is worse than an error).
 *     gs_kubeconfig_load_context() picks another context by name, like kubectl --context.
 *   - cluster: server (https:// only; host name, IPv4, or [IPv6]; port defaults to 443; no path
 *     prefix, query, or user info), certificate-authority (a file) or certificate-authority-data
 *     (base64), insecure-skip-tls-verify, tls-server-name. One of CA / insecure is required: the system
 *     trust store is never used. CA together with insecure-skip-tls-verify is refused (as client-go does).
 *   - user: token, tokenFile, client-certificate / client-certificate-data, client-key /
 *     client-key-data. username/password, exec and auth-provider fail with "not supported".
 *   - Relative file paths are relative to the kubeconfig's directory (as kubectl resolves them).
 *   - A name that appears twice in clusters/contexts/users, or a key twice in one mapping, is an error.
 *
 * Every file (the kubeconfig and what it names) is capped at GS_KUBECONFIG_FILE_MAX.
 *
 * Errors: the functions return 0, or a negative errno-style code (-EINVAL for bad content, -ENOENT,
 * -EACCES, -E2BIG, -ENOMEM ...) with a one-line reason in err that names the file and the object:
 *     kubeconfig /home/me/.kube/config: context "foo" not found
 *     kubeconfig /home/me/.kube/config: user "admin": client-certificate set without client-key
 */
#ifndef GS_K8S_KUBECONFIG_H
#define GS_K8S_KUBECONFIG_H

#include <stddef.h>

/* Cap on every file read here: the kubeconfig, CA, certificate, key, token, namespace. */
#define GS_KUBECONFIG_FILE_MAX ((size_t)1024 * 1024)

/* Where the service account is mounted in a pod. */
#define GS_KUBECONFIG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * Everything is owned by the struct and released by gs_kubeconfig_free(). NULL means absent.
 * The binary blobs (ca, cert, key) are followed by a NUL byte that *_len does not count, so PEM data
 * can be handed to mbedtls_x509_crt_parse() as (ca, ca_len + 1) and DER as (ca, ca_len).
 */
struct gs_kubeconfig {
	char *server;          /* as configured, e.g. "https://[fd00::1]:6443" */
	char *host;            /* to connect to: DNS name or IP literal, never bracketed ("fd00::1") */
	int port;              /* 1..65535; 443 when the URL has none */
	char *tls_server_name; /* tls-server-name; NULL means "verify host" (an IP is checked vs IP SANs) */
	char *ca;              /* trusted CAs, PEM or DER; NULL only when insecure_skip_verify */
	size_t ca_len;
	char *cert; /* client certificate, NULL if none */
	size_t cert_len;
	char *key; /* client key; set exactly when cert is */
	size_t key_len;
	char *token;      /* bearer token (surrounding blanks trimmed when read from a file) */
	char *token_file; /* absolute or kubeconfig-relative path resolved; re-read it to rotate */
	int insecure_skip_verify;
	char *context; /* the context used */
	char *cluster_name;
	char *user_name;
	char *namespace; /* the context's namespace (or the pod's, in cluster); NULL if unset */
};

/*
 * Loads path with its current-context. On success fills *out (which the caller frees with
 * gs_kubeconfig_free); on failure *out is left zeroed and err says why.
 */
int gs_kubeconfig_load(const char *path, struct gs_kubeconfig *out, char *err, size_t errlen);

/* Same, with the named context instead of current-context (NULL means current-context). */
int gs_kubeconfig_load_context(const char *path, const char *context, struct gs_kubeconfig *out, char *err,
			       size_t errlen);

/*
 * The parser behind the two above, from memory: yaml[0..len) (need not be NUL-terminated); relative
 * paths inside it are resolved against base_dir (NULL means the current directory). Messages start
 * with "kubeconfig: ". Exists for tests and the fuzzer; same contract otherwise.
 */
int gs_kubeconfig_parse(const char *yaml, size_t len, const char *base_dir, const char *context,
			struct gs_kubeconfig *out, char *err, size_t errlen);

/*
 * In-cluster configuration, as client-go's InClusterConfig: the apiserver from KUBERNETES_SERVICE_HOST
 * and KUBERNETES_SERVICE_PORT (an IPv6 host is bracketed in server), the CA from sa_dir/ca.crt, the
 * token from sa_dir/token (read now into token; token_file is set because the kubelet rotates it), the
 * namespace from sa_dir/namespace (NULL if that file is absent). tls_server_name stays NULL: the host
 * is usually an IP, verified against the certificate's IP SANs. sa_dir NULL means GS_KUBECONFIG_SA_DIR.
 * Fails with -ENOENT when the environment variables are not set (not running in a pod).
 */
int gs_kubeconfig_in_cluster(const char *sa_dir, struct gs_kubeconfig *out, char *err, size_t errlen);

/*
 * Reads a token file as the client must on rotation: the whole file, blanks trimmed, non-empty.
 * *out is malloc'ed (caller frees). Same error contract.
 */
int gs_kubeconfig_read_token(const char *path, char **out, char *err, size_t errlen);

/* Frees every field (the key and token are wiped first) and zeroes *k. Safe on a zeroed struct. */
void gs_kubeconfig_free(struct gs_kubeconfig *k);

#endif
