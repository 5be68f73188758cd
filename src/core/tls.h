/*
 * tls.h: TLS over mbedTLS, fed from memory. No sockets here: the connection layer (conn.h) moves
 * ciphertext between a uv stream and a session, like h2o's BIO glue.
 *
 * Policy, fixed for every session: TLS 1.2 minimum (mbedTLS 2.28 has no 1.3), ECDHE key exchange with
 * AEAD suites only, no renegotiation. Clients always verify the peer unless the config says
 * insecure_skip_verify, always send and check the server name, and check an IP-literal server name
 * against the certificate's IP SANs (mbedTLS 2.28 only matches DNS names).
 *
 * Session resumption (RFC 5077 tickets, TLS 1.2):
 *   - A client config keeps at most one resumable session: that of its most recent full handshake if
 *     the server gave a ticket in it (else none), with the server name that handshake verified. A new client
 *     session offers it at its first gs_tls_handshake() call (not at creation, so a connection opened
 *     before a handshake completes still gets the newest ticket) when, and only when, its server name
 *     is the same string. The session was verified by this config (its CAs, that name), so a config is
 *     the only thing that may resume it: configs are immutable, a new CA means a new config, and a
 *     config never hands its session to another. Resuming never skips a check the full handshake would
 *     make against this config and name, and an insecure_skip_verify config verifies nothing either way.
 *   - A server that refuses the ticket (another key, expired, no ticket support) answers with a full
 *     handshake, which the client runs and verifies as usual; the saved session is then replaced.
 *     A handshake that offered the saved session and failed (for any reason) drops it if it is still
 *     the saved one: a session that cannot be resumed costs one connection, never all of them.
 *   - A server config issues tickets (keys drawn from its DRBG, AES-256-GCM, rotated by mbedTLS every
 *     GS_TLS_TICKET_LIFETIME seconds, tickets valid that long), so its clients may resume; it keeps no
 *     session cache.
 *   - Each completed handshake is counted in its config as full or resumed (gs_tls_config_stats()).
 *   - The saved session (ticket, master secret, a copy of the peer's leaf) is freed with the config.
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

/* Certificate generation (gs_tls_generate) has its own header, included here for the callers of both. */
#include "core/tls_gen.h"

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

/*
 * A server config made by gs_tls_server_config_new asks every client for a certificate and completes a
 * handshake only with one that chains to a certificate of ca (PEM or DER, one or more), valid now: a
 * client without one, or with another, gets a handshake failure. Before any session uses the config.
 * 0, or <0 with a reason in err ("client-ca: no PEM certificate found"); the config is unchanged then.
 */
int gs_tls_server_config_require_client(struct gs_tls_config *cfg, const char *ca, size_t ca_len, char *err,
					size_t errlen);

/* Expiry (seconds since the epoch) of a server config's leaf certificate; 0 for a client config. */
int64_t gs_tls_config_not_after(const struct gs_tls_config *cfg);

/* Lifetime of the tickets a server config issues, and the rotation period of its ticket keys. */
#define GS_TLS_TICKET_LIFETIME 86400

/* Completed handshakes of the sessions of a config, counted when each completes (gs_tls_handshake()
 * returns 1): resumed from a ticket, or full (certificate and key exchange). */
struct gs_tls_stats {
	uint64_t full;
	uint64_t resumed;
};
void gs_tls_config_stats(const struct gs_tls_config *cfg, struct gs_tls_stats *st);

/* 1 when a client config holds a session its next clients to server_name will offer, else 0. */
int gs_tls_config_resumable(const struct gs_tls_config *cfg, const char *server_name);

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
/* 1 when the completed handshake resumed a session (no certificate, no key exchange), else 0. */
int gs_tls_resumed(const struct gs_tls *t);

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

#endif
