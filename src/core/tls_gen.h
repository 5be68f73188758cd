/*
 * tls_gen.h: certificates made with mbedTLS (tls_gen.c), for the webhook's self-signed mode and the
 * secure port's pair made at start (ECDSA P-256, SHA-256). Outputs are NUL-terminated PEM strings
 * owned by the caller (free()).
 */
#ifndef GS_CORE_TLS_GEN_H
#define GS_CORE_TLS_GEN_H

#include <stddef.h>
#include <stdint.h>

struct gs_tls_cert_req {
	const char *common_name;
	const char *const *dns_names; /* NULL-terminated list, may be NULL */
	int is_ca;
	int64_t not_before; /* seconds since the epoch */
	int64_t not_after;
	int client; /* not a CA: extendedKeyUsage clientAuth instead of serverAuth */
};
/* Self-signed when issuer_cert is NULL, else signed by issuer_cert/issuer_key (PEM). req, cert_pem and
 * key_pem are not NULL (GS_ASSERT). 0, or -EINVAL / -ENOMEM with a message in err and both outputs
 * NULL. */
int gs_tls_generate(const struct gs_tls_cert_req *req, const char *issuer_cert, const char *issuer_key, char **cert_pem,
		    char **key_pem, char *err, size_t errlen);

#endif
