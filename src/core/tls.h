/*
 * tls.h: TLS over mbedTLS, fed from memory. No sockets here: the connection layer (conn.h) moves
 * ciphertext between a uv stream and a session, like h2o's BIO glue.
 *
 * Policy, fixed for every session: TLS 1.2 minimum (mbedTLS 2.28 has no 1.3), ECDHE key exchange with
 * AEAD suites only, no renegotiation. Clients always verify the peer unless the config says
 * insecure_skip_verify, always send and check the server name, and check an IP-literal server name
 * against the certificate's IP SANs (mbedTLS 2.28 only matches DNS names).
 *
 * Errors are negative errno-style codes; mbedTLS codes are mapped in one place (tls.c):
 *   -EACCES      the peer's certificate was refused (chain, name, expiry); gs_tls_error() says why
 *   -EPROTO      any other handshake or record failure
 *   -ECONNRESET  the peer sent close_notify
 *   -ENOMEM, -EINVAL as usual
 */
#ifndef GS_CORE_TLS_H
#define GS_CORE_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct gs_tls_config; /* opaque, reference counted: every session holds a reference */
struct gs_tls;        /* opaque: one session */

struct gs_tls_client_opts {
	/* Trusted CAs, PEM (one or more certificates) or DER. Required unless insecure_skip_verify. */
	const char *ca;
	size_t ca_len;
	/* Optional client certificate and key, PEM or DER. */
	const char *cert;
	size_t cert_len;
	const char *key;
	size_t key_len;
	int insecure_skip_verify;
};

/*
 * Creates a client config. On failure returns <0 and writes a readable reason into err
 * (e.g. "certificate-authority: no PEM certificate found").
 */
int gs_tls_client_config_new(const struct gs_tls_client_opts *o, struct gs_tls_config **out, char *err, size_t errlen);

/* Creates a server config from a certificate chain and key (PEM or DER). Same error contract. */
int gs_tls_server_config_new(const char *cert, size_t cert_len, const char *key, size_t key_len,
			     struct gs_tls_config **out, char *err, size_t errlen);

/* Expiry (seconds since the epoch) of a server config's leaf certificate; 0 for a client config. */
int64_t gs_tls_config_not_after(const struct gs_tls_config *cfg);

void gs_tls_config_ref(struct gs_tls_config *cfg);
/* Drops a reference; the config is freed when the last session using it is freed. NULL is fine. */
void gs_tls_config_unref(struct gs_tls_config *cfg);

/*
 * Sessions. server_name is the name the client sends (SNI) and verifies: a DNS name, or an IPv4/IPv6
 * literal checked against IP SANs. A session takes its own reference on cfg.
 */
int gs_tls_client_new(struct gs_tls_config *cfg, const char *server_name, struct gs_tls **out);
int gs_tls_server_new(struct gs_tls_config *cfg, struct gs_tls **out);
void gs_tls_free(struct gs_tls *t); /* NULL is fine */

/* Ciphertext received from the peer. Copied; 0 or -ENOMEM. */
int gs_tls_feed(struct gs_tls *t, const char *data, size_t len);

/* Advances the handshake: 1 complete, 0 needs more input (flush output first), <0 error. */
int gs_tls_handshake(struct gs_tls *t);
int gs_tls_handshake_done(const struct gs_tls *t);

/* Decrypted bytes: >0 count, 0 needs more input, <0 error (-ECONNRESET on close_notify). */
int gs_tls_read(struct gs_tls *t, char *buf, size_t len);

/* Encrypts all of data into the pending output. 0 or <0. Only after the handshake. */
int gs_tls_write(struct gs_tls *t, const char *data, size_t len);

/* Queues a close_notify alert. */
void gs_tls_close_notify(struct gs_tls *t);

/* Moves all pending ciphertext to the end of out. 0, or <0 if out is full. */
int gs_tls_flush(struct gs_tls *t, struct gs_buf *out);

/* Readable reason for the last failure of this session ("" if none). */
const char *gs_tls_error(const struct gs_tls *t);

/* Protocol and suite negotiated, for logs and tests; NULL before the handshake. */
const char *gs_tls_version(const struct gs_tls *t);
const char *gs_tls_ciphersuite(const struct gs_tls *t);

/*
 * Certificate generation for the webhook's self-signed mode (ECDSA P-256, SHA-256).
 * Outputs are NUL-terminated PEM strings owned by the caller (free()).
 */
struct gs_tls_cert_req {
	const char *common_name;
	const char *const *dns_names; /* NULL-terminated list, may be NULL */
	int is_ca;
	int64_t not_before; /* seconds since the epoch */
	int64_t not_after;
};
/* Self-signed when issuer_cert is NULL, else signed by issuer_cert/issuer_key (PEM). */
int gs_tls_generate(const struct gs_tls_cert_req *req, const char *issuer_cert, const char *issuer_key,
		    char **cert_pem, char **key_pem, char *err, size_t errlen);

#endif
