/*
 * tls_int.h: what tls.c (configs, sessions, verification) and tls_gen.c (certificate generation)
 * share. Not part of the public API: include only from src/core/tls*.c.
 */
#ifndef GS_CORE_TLS_INT_H
#define GS_CORE_TLS_INT_H

#include <stddef.h>

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

/*
 * Maps an mbedTLS error code to a negative errno code. The one place where that mapping lives:
 *   MBEDTLS_ERR_X509_CERT_VERIFY_FAILED -> -EACCES, PEER_CLOSE_NOTIFY -> -ECONNRESET,
 *   any *_ALLOC_FAILED (high or low part) -> -ENOMEM, BAD_INPUT_DATA -> -EINVAL, else -EPROTO.
 */
int gs_tls__errno(int mbedtls_err);

/* snprintf into err (may be NULL when errlen is 0). */
void gs_tls__seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Parse a certificate chain / private key, PEM or DER. A PEM buffer may or may not include its
 * terminating NUL in len (mbedTLS needs it counted: we copy when it is missing). On failure writes
 * "<what>: reason" into err. 0, -EINVAL or -ENOMEM. allow_partial accepts a PEM bundle of which
 * some certificates did not parse as long as one did (CA bundles).
 */
int gs_tls__parse_crt(mbedtls_x509_crt *crt, const char *what, const char *data, size_t len, int allow_partial,
		      char *err, size_t errlen);
int gs_tls__parse_key(mbedtls_pk_context *pk, const char *what, const char *data, size_t len, char *err, size_t errlen);

/*
 * If name is an IPv4 or IPv6 literal (IPv6 optionally in brackets), writes its 4 or 16 bytes into ip
 * and returns 4 or 16; otherwise returns 0.
 */
int gs_tls__parse_ip(const char *name, unsigned char ip[16]);

#endif
