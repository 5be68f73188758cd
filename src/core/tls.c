/*
 * tls.c: mbedTLS 2.28 sessions fed from memory (see tls.h and docs/http.md).
 *
 * A session owns two byte buffers: `in` holds ciphertext handed to gs_tls_feed() that mbedTLS has not
 * pulled yet, `out` collects what mbedTLS wants to send until gs_tls_flush(). The bio callbacks never
 * block: recv answers WANT_READ when `in` is drained, send always takes everything. Both buffers keep
 * their memory, so a connection in steady state allocates nothing per record.
 */
#include "core/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/asn1.h>
#include <mbedtls/bignum.h>
#include <mbedtls/cipher.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/pem.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_internal.h> /* mbedtls_ssl_handshake_params.resume: 2.28 has no accessor */
#include <mbedtls/ssl_ticket.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/num.h"
#include "core/tls_int.h"

/* Unread ciphertext a session holds at most: far above one uv read (64 KiB) plus a partial record,
 * so only a caller that feeds without draining reaches it. */
#define GS_TLS_FEED_MAX (4u << 20)

/* ECDHE + AEAD, TLS 1.2. The server picks in this order (mbedTLS honours the server's order). */
/*
 * ChaCha20-Poly1305 first. What the daemon does most is decrypt: lists and watch streams of pods, some
 * 32 KiB per scheduled pod in the bench's StatefulSet shape. mbedTLS 2.28 computes GCM's GHASH one
 * block per call: measured here (2 vCPU EPYC, 16 KiB records) AES-128-GCM decrypts 240 MB/s and
 * ChaCha20-Poly1305 433 MB/s, and a profile of the daemon binding 10,000 pods put 37% of its CPU in
 * GCM. A Go server (the apiserver, built with Go >= 1.17) picks ChaCha20 when the client lists it
 * first; one that keeps its own order still gets AES-GCM from us.
 */
static const int tls_suites[] = {
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	0,
};

/* The default list starts with P-521 (slow) and includes brainpool; x25519 and P-256 are what peers
 * use. The list also bounds the curves accepted for certificate keys, hence P-384 and P-521. */
static const mbedtls_ecp_group_id tls_curves[] = {
	MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP256R1, MBEDTLS_ECP_DP_SECP384R1,
	MBEDTLS_ECP_DP_SECP521R1,  MBEDTLS_ECP_DP_NONE,
};

static const char *tls_alpn[] = {"http/1.1", NULL};

struct gs_tls_config {
	unsigned refs;
	int endpoint; /* MBEDTLS_SSL_IS_CLIENT / _SERVER */
	int verify;   /* client: verify the server (not insecure_skip_verify) */
	int64_t not_after;
	mbedtls_ssl_config conf;
	/* One DRBG per config, shared by its sessions: everything runs on the loop thread. */
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	mbedtls_x509_crt ca;
	mbedtls_x509_crt cert;
	mbedtls_pk_context key;
	/* Client: the session to resume (see tls.h), valid when saved_name is set; the name it verified. */
	mbedtls_ssl_session saved;
	char *saved_name;
	/* Server: the ticket keys. */
	mbedtls_ssl_ticket_context ticket;
	struct gs_tls_stats stats;
};

struct gs_tls {
	struct gs_tls_config *cfg;
	mbedtls_ssl_context ssl;
	struct gs_buf in;
	size_t in_off; /* bytes of `in` already given to mbedTLS */
	struct gs_buf out;
	int done;               /* handshake complete */
	int started;            /* the first handshake step ran (a client's saved session was offered, or not) */
	int resumed;            /* the handshake resumed a session (final once done) */
	unsigned char *offered; /* client: a copy of the ticket it offered, NULL if none */
	size_t offered_len;
	int fatal;  /* latched error: mbedTLS contexts must not be used after one */
	int ip_len; /* 4 or 16 when server_name is an IP literal */
	unsigned char ip[16];
	char *server_name;
	char name_err[384]; /* set by the verify callback when the leaf does not name server_name */
	char err[512];
};

/* ---- errors ---------------------------------------------------------------------------------- */

void gs_tls__seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int is_alloc_failure(int code)
{
	switch (code) {
	case MBEDTLS_ERR_SSL_ALLOC_FAILED:
	case MBEDTLS_ERR_X509_ALLOC_FAILED:
	case MBEDTLS_ERR_PK_ALLOC_FAILED:
	case MBEDTLS_ERR_MPI_ALLOC_FAILED:
	case MBEDTLS_ERR_ECP_ALLOC_FAILED:
	case MBEDTLS_ERR_ASN1_ALLOC_FAILED:
	case MBEDTLS_ERR_PEM_ALLOC_FAILED:
	case MBEDTLS_ERR_CIPHER_ALLOC_FAILED:
	case MBEDTLS_ERR_MD_ALLOC_FAILED:
		return 1;
	}
	return 0;
}

int gs_tls__errno(int e)
{
	/* mbedTLS adds a high-level code (0x1000..0x7F80) and a low-level one (0x01..0x7F). */
	int high = -((-e) & 0xFF80), low = -((-e) & 0x007F);

	if (e >= 0)
		return 0;
	if (is_alloc_failure(high) || is_alloc_failure(low) || is_alloc_failure(e))
		return -ENOMEM;
	switch (high) {
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
		return -EACCES;
	case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
		return -ECONNRESET;
	case MBEDTLS_ERR_SSL_BAD_INPUT_DATA:
		return -EINVAL;
	}
	return -EPROTO;
}

/* clang-format off */
static const char *alert_name(int a)
{
	switch (a) {
	case 0: return "close_notify";
	case 10: return "unexpected_message";
	case 20: return "bad_record_mac";
	case 22: return "record_overflow";
	case 40: return "handshake_failure";
	case 42: return "bad_certificate";
	case 43: return "unsupported_certificate";
	case 44: return "certificate_revoked";
	case 45: return "certificate_expired";
	case 46: return "certificate_unknown";
	case 47: return "illegal_parameter";
	case 48: return "unknown_ca";
	case 49: return "access_denied";
	case 50: return "decode_error";
	case 51: return "decrypt_error";
	case 70: return "protocol_version";
	case 71: return "insufficient_security";
	case 80: return "internal_error";
	case 86: return "inappropriate_fallback";
	case 90: return "user_canceled";
	case 100: return "no_renegotiation";
	case 110: return "unsupported_extension";
	case 112: return "unrecognized_name";
	case 120: return "no_application_protocol";
	}
	return "unknown alert";
}
/* clang-format on */

static const struct {
	uint32_t flag;
	const char *text;
} verify_reasons[] = {
	{MBEDTLS_X509_BADCERT_NOT_TRUSTED, "certificate not trusted by the configured CA"},
	{MBEDTLS_X509_BADCERT_EXPIRED, "certificate has expired"},
	{MBEDTLS_X509_BADCERT_FUTURE, "certificate is not valid yet"},
	{MBEDTLS_X509_BADCERT_REVOKED, "certificate has been revoked"},
	{MBEDTLS_X509_BADCERT_MISSING, "peer sent no certificate"},
	{MBEDTLS_X509_BADCERT_KEY_USAGE, "certificate keyUsage does not allow this use"},
	{MBEDTLS_X509_BADCERT_EXT_KEY_USAGE, "certificate extendedKeyUsage does not allow TLS server authentication"},
	{MBEDTLS_X509_BADCERT_NS_CERT_TYPE, "certificate nsCertType does not allow this use"},
	{MBEDTLS_X509_BADCERT_BAD_MD, "certificate signed with a refused hash (e.g. SHA-1)"},
	{MBEDTLS_X509_BADCERT_BAD_PK, "certificate signed with a refused algorithm"},
	{MBEDTLS_X509_BADCERT_BAD_KEY, "certificate key too weak or on an unsupported curve"},
};

static void append(char *dst, size_t n, const char *s)
{
	size_t l = strlen(dst);
	if (l + 1 < n)
		snprintf(dst + l, n - l, "%s%s", l ? "; " : "", s);
}

/* Why the peer's certificate was refused, from the verify flags, one clause per reason. */
static void verify_reason(struct gs_tls *t, char *dst, size_t n)
{
	uint32_t flags = mbedtls_ssl_get_verify_result(&t->ssl), known = 0;
	char other[256];

	dst[0] = '\0';
	if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) {
		known |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
		if (t->name_err[0]) {
			append(dst, n, t->name_err);
		} else {
			snprintf(other, sizeof(other), "certificate does not name %s",
				 t->server_name ? t->server_name : "the server");
			append(dst, n, other);
		}
	}
	for (size_t i = 0; i < sizeof(verify_reasons) / sizeof(verify_reasons[0]); i++) {
		if (flags & verify_reasons[i].flag) {
			append(dst, n, verify_reasons[i].text);
			known |= verify_reasons[i].flag;
		}
	}
	if ((flags & ~known) && mbedtls_x509_crt_verify_info(other, sizeof(other), "", flags & ~known) > 0) {
		for (char *p = other; *p; p++)
			if (*p == '\n')
				*p = (p[1] ? ';' : '\0');
		append(dst, n, other);
	}
	if (!dst[0])
		snprintf(dst, n, "certificate verification failed");
}

/* Records why session t failed with mbedTLS code e; returns the errno code, latched for later calls. */
static int fail(struct gs_tls *t, int e)
{
	int code = gs_tls__errno(e), high = -((-e) & 0xFF80);
	char buf[160];

	switch (high) {
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
		verify_reason(t, t->err, sizeof(t->err));
		break;
	case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
		snprintf(t->err, sizeof(t->err), "peer closed the TLS session (close_notify)");
		break;
	case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE: {
		int a = -1;
		if (t->ssl.in_msg && t->ssl.in_msgtype == MBEDTLS_SSL_MSG_ALERT && t->ssl.in_msglen >= 2)
			a = t->ssl.in_msg[1];
		snprintf(t->err, sizeof(t->err), "peer sent fatal alert %s (%d)", alert_name(a), a);
		break;
	}
	case MBEDTLS_ERR_SSL_BAD_HS_PROTOCOL_VERSION:
		snprintf(t->err, sizeof(t->err), "peer does not support TLS 1.2 (TLS 1.2 is required)");
		break;
	case MBEDTLS_ERR_SSL_NO_CIPHER_CHOSEN:
	case MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE:
		snprintf(t->err, sizeof(t->err),
			 "no cipher suite in common (only ECDHE with AES-GCM or ChaCha20-Poly1305 is accepted)");
		break;
	case MBEDTLS_ERR_SSL_INVALID_RECORD:
		snprintf(t->err, sizeof(t->err), "malformed TLS record (is the peer speaking TLS?)");
		break;
	case MBEDTLS_ERR_SSL_INVALID_MAC:
		snprintf(t->err, sizeof(t->err), "TLS record failed authentication");
		break;
	default:
		mbedtls_strerror(e, buf, sizeof(buf));
		snprintf(t->err, sizeof(t->err), "%s (-0x%04x)", buf, (unsigned)-e);
		break;
	}
	t->fatal = code;
	return code;
}

/* ---- subjectAltName ---------------------------------------------------------------------------- */

/* mbedTLS 2.28 lists only dNSName and otherName entries in crt->subject_alt_names and never matches
 * an IP address, so the extension is walked here from the raw v3 extensions. */
typedef void (*san_cb)(int tag, const unsigned char *p, size_t len, void *arg);

#define SAN_DNS (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 2)
#define SAN_IP  (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7)

/* Calls cb for each GeneralName of the subjectAltName extension. Returns the number of names, or -1
 * when the extensions do not parse (mbedTLS parsed them already, so that means a bug of ours). */
static int san_walk(const mbedtls_x509_crt *crt, san_cb cb, void *arg)
{
	unsigned char *p = crt->v3_ext.p, *end, *ext_end, *names_end;
	size_t len;
	int n = 0;

	if (!p || !crt->v3_ext.len)
		return 0;
	end = p + crt->v3_ext.len;
	/* v3_ext is the content of [3]: Extensions ::= SEQUENCE OF Extension */
	if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE))
		return -1;
	end = p + len;
	while (p < end) {
		const unsigned char *oid;
		size_t oid_len;
		int critical;

		if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE))
			return -1;
		ext_end = p + len;
		if (mbedtls_asn1_get_tag(&p, ext_end, &oid_len, MBEDTLS_ASN1_OID))
			return -1;
		oid = p;
		p += oid_len;
		if (p < ext_end && *p == MBEDTLS_ASN1_BOOLEAN && mbedtls_asn1_get_bool(&p, ext_end, &critical))
			return -1;
		if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_OCTET_STRING))
			return -1;
		if (oid_len != sizeof(MBEDTLS_OID_SUBJECT_ALT_NAME) - 1 ||
		    memcmp(oid, MBEDTLS_OID_SUBJECT_ALT_NAME, oid_len) != 0) {
			p = ext_end;
			continue;
		}
		/* GeneralNames ::= SEQUENCE OF GeneralName (a CHOICE of context tags) */
		if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE))
			return -1;
		names_end = p + len;
		while (p < names_end) {
			int tag = *p++;
			if (mbedtls_asn1_get_len(&p, names_end, &len))
				return -1;
			if (cb)
				cb(tag, p, len, arg);
			p += len;
			n++;
		}
		p = ext_end;
	}
	return n;
}

struct ip_match {
	const unsigned char *ip;
	size_t len;
	int found;
};

static void match_ip(int tag, const unsigned char *p, size_t len, void *arg)
{
	struct ip_match *m = arg;
	if (tag == SAN_IP && len == m->len && memcmp(p, m->ip, len) == 0)
		m->found = 1;
}

struct name_list {
	char *buf;
	size_t size;
	size_t len;
};

static void list_add(struct name_list *l, const char *kind, const char *name, size_t name_len)
{
	int r;
	if (l->len + 1 >= l->size)
		return;
	r = snprintf(l->buf + l->len, l->size - l->len, "%s%s:%.*s", l->len ? ", " : "", kind, (int)name_len, name);
	if (r < 0 || (size_t)r >= l->size - l->len) {
		/* Truncated: end the list with an ellipsis that fits. */
		l->len = l->size - 1;
		if (l->size > 4)
			memcpy(l->buf + l->size - 4, "...", 4);
		return;
	}
	l->len += (size_t)r;
}

static void list_name(int tag, const unsigned char *p, size_t len, void *arg)
{
	struct name_list *l = arg;
	char ip[INET6_ADDRSTRLEN];

	if (tag == SAN_DNS) {
		list_add(l, "DNS", (const char *)p, len < 256 ? len : 256);
	} else if (tag == SAN_IP && (len == 4 || len == 16)) {
		if (inet_ntop(len == 4 ? AF_INET : AF_INET6, p, ip, sizeof(ip)))
			list_add(l, "IP", ip, strlen(ip));
	}
}

/* "DNS:a, IP:b", or the subject CN when there is no subjectAltName (mbedTLS then matches the CN). */
static void cert_names(const mbedtls_x509_crt *crt, char *buf, size_t size)
{
	struct name_list l = {buf, size, 0};

	buf[0] = '\0';
	san_walk(crt, list_name, &l);
	if (l.len)
		return;
	for (const mbedtls_x509_name *n = &crt->subject; n; n = n->next) {
		if (n->oid.p && n->oid.len == sizeof(MBEDTLS_OID_AT_CN) - 1 &&
		    memcmp(n->oid.p, MBEDTLS_OID_AT_CN, n->oid.len) == 0)
			list_add(&l, "CN", (const char *)n->val.p, n->val.len);
	}
	if (!l.len)
		snprintf(buf, size, "none");
}

/*
 * Verify callback, called for each certificate of the chain (depth 0 is the leaf) whatever the chain
 * verification found. It adds the IP-SAN check mbedTLS lacks, and words the name mismatch.
 */
static int verify_cb(void *arg, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	struct gs_tls *t = arg;
	char names[256];

	if (depth != 0)
		return 0;
	if (t->ip_len) {
		struct ip_match m = {t->ip, (size_t)t->ip_len, 0};
		san_walk(crt, match_ip, &m);
		if (!m.found)
			*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
	}
	if (*flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) {
		cert_names(crt, names, sizeof(names));
		snprintf(t->name_err, sizeof(t->name_err), "certificate does not name %s%s (its names: %s)",
			 t->ip_len ? "IP address " : "", t->server_name ? t->server_name : "", names);
	}
	return 0;
}

int gs_tls__parse_ip(const char *name, unsigned char ip[16])
{
	char tmp[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(name);

	if (inet_pton(AF_INET, name, ip) == 1)
		return 4;
	if (n >= 2 && name[0] == '[' && name[n - 1] == ']' && n - 2 < sizeof(tmp)) {
		memcpy(tmp, name + 1, n - 2);
		tmp[n - 2] = '\0';
		name = tmp;
	}
	if (inet_pton(AF_INET6, name, ip) == 1)
		return 16;
	return 0;
}

/* ---- parsing inputs -------------------------------------------------------------------------- */

/* mbedTLS takes a buffer as PEM only when its last byte is the NUL. Returns the buffer to hand it:
 * data itself, or a NUL-terminated copy in *copy (freed by the caller). */
static const char *pem_terminated(const char *data, size_t len, const char *marker, char **copy, size_t *out_len)
{
	*copy = NULL;
	*out_len = len;
	if (len == 0 || data[len - 1] == '\0' || !memmem(data, len, marker, strlen(marker)))
		return data;
	*copy = gs_xmalloc(len + 1);
	memcpy(*copy, data, len);
	(*copy)[len] = '\0';
	*out_len = len + 1;
	return *copy;
}

/* A certificate or key input as mbedTLS takes it: p[0..n), data itself or a NUL-terminated copy. */
struct tls_input {
	const unsigned char *p;
	size_t n;
	char *copy;
};

/* Opens input `what` (pem_terminated); -EINVAL with "<what>: empty" in err for an empty one. */
static int tls_input_open(struct tls_input *in, const char *what, const char *data, size_t len, char *err,
			  size_t errlen)
{
	in->copy = NULL;
	if (!data || !len) {
		gs_tls__seterr(err, errlen, "%s: empty", what);
		return -EINVAL;
	}
	in->p = (const unsigned char *)pem_terminated(data, len, "-----BEGIN", &in->copy, &in->n);
	return 0;
}

/* Frees the copy, wiped first when it holds a secret. */
static void tls_input_close(struct tls_input *in, int secret)
{
	if (in->copy && secret)
		mbedtls_platform_zeroize(in->copy, in->n);
	free(in->copy);
}

int gs_tls__parse_crt(mbedtls_x509_crt *crt, const char *what, const char *data, size_t len, int allow_partial,
		      char *err, size_t errlen)
{
	struct tls_input in;
	char msg[128];
	int r;

	if (tls_input_open(&in, what, data, len, err, errlen) < 0)
		return -EINVAL;
	r = mbedtls_x509_crt_parse(crt, in.p, in.n);
	tls_input_close(&in, 0);
	if (r > 0 && crt->version != 0 && allow_partial) {
		gs_log_warn("tls: %s: %d certificate(s) could not be parsed and are ignored", what, r);
		return 0;
	}
	if (r > 0) {
		gs_tls__seterr(err, errlen, "%s: %d certificate(s) could not be parsed", what, r);
		return -EINVAL;
	}
	if (r < 0) {
		if (gs_tls__errno(r) == -ENOMEM) {
			gs_tls__seterr(err, errlen, "%s: out of memory", what);
			return -ENOMEM;
		}
		if (!memmem(data, len, "-----BEGIN CERTIFICATE-----", 27) && (unsigned char)data[0] != 0x30) {
			gs_tls__seterr(err, errlen, "%s: no PEM certificate found", what);
		} else {
			mbedtls_strerror(r, msg, sizeof(msg));
			gs_tls__seterr(err, errlen, "%s: cannot parse certificate: %s", what, msg);
		}
		return -EINVAL;
	}
	return 0;
}

int gs_tls__parse_key(mbedtls_pk_context *pk, const char *what, const char *data, size_t len, char *err, size_t errlen)
{
	struct tls_input in;
	char msg[128];
	int r;

	if (tls_input_open(&in, what, data, len, err, errlen) < 0)
		return -EINVAL;
	r = mbedtls_pk_parse_key(pk, in.p, in.n, NULL, 0);
	tls_input_close(&in, 1);
	if (r == 0 && !mbedtls_pk_can_do(pk, MBEDTLS_PK_ECDSA) && !mbedtls_pk_can_do(pk, MBEDTLS_PK_RSA)) {
		gs_tls__seterr(err, errlen, "%s: only ECDSA and RSA keys are supported", what);
		return -EINVAL;
	}
	if (r == MBEDTLS_ERR_PK_PASSWORD_REQUIRED || r == MBEDTLS_ERR_PK_PASSWORD_MISMATCH) {
		gs_tls__seterr(err, errlen, "%s: encrypted private keys are not supported", what);
		return -EINVAL;
	}
	if (r < 0) {
		if (gs_tls__errno(r) == -ENOMEM) {
			gs_tls__seterr(err, errlen, "%s: out of memory", what);
			return -ENOMEM;
		}
		mbedtls_strerror(r, msg, sizeof(msg));
		gs_tls__seterr(err, errlen, "%s: cannot parse private key: %s", what, msg);
		return -EINVAL;
	}
	return 0;
}

/* ---- configs --------------------------------------------------------------------------------- */

static int64_t x509_time_epoch(const mbedtls_x509_time *t)
{
	return gs_num_days_from_civil(t->year, t->mon, t->day) * 86400 + t->hour * 3600 + t->min * 60 + t->sec;
}

static struct gs_tls_config *config_alloc(int endpoint, char *err, size_t errlen, int *rc)
{
	static const char pers[] = "gs_tls_config";
	struct gs_tls_config *c = gs_xcalloc(1, sizeof(*c));
	int r;

	c->refs = 1;
	c->endpoint = endpoint;
	mbedtls_ssl_config_init(&c->conf);
	mbedtls_entropy_init(&c->entropy);
	mbedtls_ctr_drbg_init(&c->drbg);
	mbedtls_x509_crt_init(&c->ca);
	mbedtls_x509_crt_init(&c->cert);
	mbedtls_pk_init(&c->key);
	mbedtls_ssl_session_init(&c->saved);
	mbedtls_ssl_ticket_init(&c->ticket);

	r = mbedtls_ctr_drbg_seed(&c->drbg, mbedtls_entropy_func, &c->entropy, (const unsigned char *)pers,
				  sizeof(pers) - 1);
	if (r == 0)
		r = mbedtls_ssl_config_defaults(&c->conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
						MBEDTLS_SSL_PRESET_DEFAULT);
	if (r == 0)
		r = mbedtls_ssl_conf_alpn_protocols(&c->conf, tls_alpn);
	if (r != 0) {
		char msg[128];
		mbedtls_strerror(r, msg, sizeof(msg));
		gs_tls__seterr(err, errlen, "TLS setup: %s", msg);
		*rc = gs_tls__errno(r) == -ENOMEM ? -ENOMEM : -EIO;
		gs_tls_config_unref(c);
		return NULL;
	}
	mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, &c->drbg);
	mbedtls_ssl_conf_min_version(&c->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_max_version(&c->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_ciphersuites(&c->conf, tls_suites);
	mbedtls_ssl_conf_curves(&c->conf, tls_curves);
	mbedtls_ssl_conf_renegotiation(&c->conf, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
	mbedtls_ssl_conf_legacy_renegotiation(&c->conf, MBEDTLS_SSL_LEGACY_NO_RENEGOTIATION);
	/* Resumption by tickets only: a client offers its config's saved session, a server issues tickets
	 * (gs_tls_server_config_new) and keeps no session cache. */
	mbedtls_ssl_conf_session_tickets(&c->conf, MBEDTLS_SSL_SESSION_TICKETS_ENABLED);
	return c;
}

/* Loads cert+key into c and checks they belong together. */
static int load_own_cert(struct gs_tls_config *c, const char *what_cert, const char *cert, size_t cert_len,
			 const char *what_key, const char *key, size_t key_len, char *err, size_t errlen)
{
	int r = gs_tls__parse_crt(&c->cert, what_cert, cert, cert_len, 0, err, errlen);
	if (r < 0)
		return r;
	r = gs_tls__parse_key(&c->key, what_key, key, key_len, err, errlen);
	if (r < 0)
		return r;
	if (mbedtls_pk_check_pair(&c->cert.pk, &c->key) != 0) {
		gs_tls__seterr(err, errlen, "%s and %s do not match", what_cert, what_key);
		return -EINVAL;
	}
	r = mbedtls_ssl_conf_own_cert(&c->conf, &c->cert, &c->key);
	if (r != 0) {
		gs_tls__seterr(err, errlen, "%s: cannot use it (-0x%04x)", what_cert, (unsigned)-r);
		return gs_tls__errno(r) == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	return 0;
}

int gs_tls_client_config_new(const struct gs_tls_client_opts *o, struct gs_tls_config **out, char *err, size_t errlen)
{
	struct gs_tls_config *c;
	int r = 0;

	*out = NULL;
	if (!o->insecure_skip_verify && (!o->ca || !o->ca_len)) {
		gs_tls__seterr(err, errlen, "certificate-authority: required unless insecure_skip_verify is set");
		return -EINVAL;
	}
	if (!o->cert != !o->key) {
		gs_tls__seterr(err, errlen, "client-certificate and client-key must be given together");
		return -EINVAL;
	}
	c = config_alloc(MBEDTLS_SSL_IS_CLIENT, err, errlen, &r);
	if (!c)
		return r;
	c->verify = !o->insecure_skip_verify;
	if (o->ca && o->ca_len) {
		r = gs_tls__parse_crt(&c->ca, "certificate-authority", o->ca, o->ca_len, 1, err, errlen);
		if (r < 0)
			goto out;
		mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
	}
	mbedtls_ssl_conf_authmode(&c->conf, c->verify ? MBEDTLS_SSL_VERIFY_REQUIRED : MBEDTLS_SSL_VERIFY_NONE);
	if (o->cert) {
		r = load_own_cert(c, "client-certificate", o->cert, o->cert_len, "client-key", o->key, o->key_len, err,
				  errlen);
		if (r < 0)
			goto out;
	}
	*out = c;
	c = NULL;
out:
	gs_tls_config_unref(c);
	return r;
}

int gs_tls_server_config_new(const char *cert, size_t cert_len, const char *key, size_t key_len,
			     struct gs_tls_config **out, char *err, size_t errlen)
{
	struct gs_tls_config *c;
	int r = 0;

	*out = NULL;
	c = config_alloc(MBEDTLS_SSL_IS_SERVER, err, errlen, &r);
	if (!c)
		return r;
	r = load_own_cert(c, "certificate", cert, cert_len, "key", key, key_len, err, errlen);
	if (r < 0)
		goto out;
	/* No client certificates are asked for (unless gs_tls_server_config_require_client). */
	mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_NONE);
	r = mbedtls_ssl_ticket_setup(&c->ticket, mbedtls_ctr_drbg_random, &c->drbg, MBEDTLS_CIPHER_AES_256_GCM,
				     GS_TLS_TICKET_LIFETIME);
	if (r != 0) {
		gs_tls__seterr(err, errlen, "TLS session tickets: cannot set up (-0x%04x)", (unsigned)-r);
		r = gs_tls__errno(r) == -ENOMEM ? -ENOMEM : -EIO;
		goto out;
	}
	mbedtls_ssl_conf_session_tickets_cb(&c->conf, mbedtls_ssl_ticket_write, mbedtls_ssl_ticket_parse, &c->ticket);
	c->not_after = x509_time_epoch(&c->cert.valid_to);
	*out = c;
	c = NULL;
out:
	gs_tls_config_unref(c);
	return r;
}

int gs_tls_server_config_require_client(struct gs_tls_config *c, const char *ca, size_t ca_len, char *err,
					size_t errlen)
{
	int r;

	/* once, before any session completed a handshake with it (tls.h) */
	GS_ASSERT(c->endpoint == MBEDTLS_SSL_IS_SERVER && c->ca.version == 0 && !c->stats.full && !c->stats.resumed);
	r = gs_tls__parse_crt(&c->ca, "client-ca", ca, ca_len, 1, err, errlen);
	if (r < 0) {
		mbedtls_x509_crt_free(&c->ca);
		mbedtls_x509_crt_init(&c->ca);
		return r;
	}
	mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
	mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	return 0;
}

/* Client: the config's saved session is dropped (mbedtls_ssl_session_free zeroes it for reuse). */
static void saved_forget(struct gs_tls_config *c)
{
	mbedtls_ssl_session_free(&c->saved);
	free(c->saved_name);
	c->saved_name = NULL;
}

void gs_tls_config_stats(const struct gs_tls_config *cfg, struct gs_tls_stats *st)
{
	*st = cfg->stats;
}

int gs_tls_config_resumable(const struct gs_tls_config *cfg, const char *server_name)
{
	return cfg->saved_name && strcmp(cfg->saved_name, server_name ? server_name : "") == 0;
}

int64_t gs_tls_config_not_after(const struct gs_tls_config *cfg)
{
	return cfg->endpoint == MBEDTLS_SSL_IS_SERVER ? cfg->not_after : 0;
}

void gs_tls_config_ref(struct gs_tls_config *cfg)
{
	GS_ASSERT(cfg->refs > 0); /* a reference is taken only from a live one */
	cfg->refs++;
}

void gs_tls_config_unref(struct gs_tls_config *cfg)
{
	if (!cfg)
		return;
	GS_ASSERT(cfg->refs > 0); /* one unref per reference */
	if (--cfg->refs > 0)
		return;
	mbedtls_ssl_config_free(&cfg->conf);
	mbedtls_x509_crt_free(&cfg->ca);
	mbedtls_x509_crt_free(&cfg->cert);
	mbedtls_pk_free(&cfg->key);
	saved_forget(cfg);
	mbedtls_ssl_ticket_free(&cfg->ticket);
	mbedtls_ctr_drbg_free(&cfg->drbg);
	mbedtls_entropy_free(&cfg->entropy);
	free(cfg);
}

/* ---- sessions -------------------------------------------------------------------------------- */

static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct gs_tls *t = ctx;
	if (len > INT_MAX)
		len = INT_MAX;
	if (gs_buf_append(&t->out, buf, len) < 0)
		return MBEDTLS_ERR_SSL_ALLOC_FAILED;
	return (int)len;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct gs_tls *t = ctx;
	size_t avail = t->in.len - t->in_off;

	if (avail == 0)
		return MBEDTLS_ERR_SSL_WANT_READ;
	if (len > avail)
		len = avail;
	if (len > INT_MAX)
		len = INT_MAX;
	memcpy(buf, t->in.data + t->in_off, len);
	t->in_off += len;
	if (t->in_off == t->in.len) {
		gs_buf_reset(&t->in);
		t->in_off = 0;
	}
	return (int)len;
}

static int session_new(struct gs_tls_config *cfg, struct gs_tls **out)
{
	struct gs_tls *t = gs_xcalloc(1, sizeof(*t));
	int r;

	mbedtls_ssl_init(&t->ssl);
	gs_buf_init(&t->in, GS_TLS_FEED_MAX);
	gs_buf_init(&t->out, 0);
	gs_tls_config_ref(cfg);
	t->cfg = cfg;
	r = mbedtls_ssl_setup(&t->ssl, &cfg->conf);
	if (r != 0) {
		gs_tls_free(t);
		return gs_tls__errno(r);
	}
	mbedtls_ssl_set_bio(&t->ssl, t, bio_send, bio_recv, NULL);
	*out = t;
	return 0;
}

int gs_tls_client_new(struct gs_tls_config *cfg, const char *server_name, struct gs_tls **out)
{
	struct gs_tls *t = NULL;
	int r;

	*out = NULL;
	if (cfg->endpoint != MBEDTLS_SSL_IS_CLIENT)
		return -EINVAL;
	if ((!server_name || !*server_name) && cfg->verify)
		return -EINVAL;
	r = session_new(cfg, &t);
	if (r < 0)
		return r;
	if (server_name && *server_name) {
		t->server_name = gs_xstrdup(server_name);
		t->ip_len = gs_tls__parse_ip(server_name, t->ip);
		/* RFC 6066: no SNI for IP literals. Without a hostname mbedTLS checks no name at all, so
		 * the verify callback does the IP-SAN check. */
		if (!t->ip_len) {
			r = mbedtls_ssl_set_hostname(&t->ssl, server_name);
			if (r != 0) {
				r = gs_tls__errno(r);
				goto out;
			}
		}
	}
	if (cfg->verify)
		mbedtls_ssl_set_verify(&t->ssl, verify_cb, t);
	*out = t;
	t = NULL;
out:
	gs_tls_free(t);
	return r;
}

int gs_tls_server_new(struct gs_tls_config *cfg, struct gs_tls **out)
{
	*out = NULL;
	if (cfg->endpoint != MBEDTLS_SSL_IS_SERVER)
		return -EINVAL;
	return session_new(cfg, out);
}

void gs_tls_free(struct gs_tls *t)
{
	if (!t)
		return;
	mbedtls_ssl_free(&t->ssl);
	gs_buf_free(&t->in);
	gs_buf_free(&t->out);
	free(t->server_name);
	free(t->offered);
	gs_tls_config_unref(t->cfg);
	free(t);
}

int gs_tls_feed(struct gs_tls *t, const char *data, size_t len)
{
	if (t->in_off) {
		/* Keep the unread tail at the front so the buffer does not creep. */
		gs_buf_consume(&t->in, t->in_off);
		t->in_off = 0;
	}
	return gs_buf_append(&t->in, data, len);
}

/* Client: whether ticket[0..len) is the one this session offered. */
static int offered_ticket(const struct gs_tls *t, const unsigned char *ticket, size_t len)
{
	return t->offered && ticket && len == t->offered_len && memcmp(ticket, t->offered, len) == 0;
}

/* Client, before the first handshake step: offers the config's saved session if it was verified for
 * this server name (tls.h). A failure to copy it only costs the resumption. */
static void offer_session(struct gs_tls *t)
{
	struct gs_tls_config *c = t->cfg;

	if (c->endpoint != MBEDTLS_SSL_IS_CLIENT || !gs_tls_config_resumable(c, t->server_name))
		return;
	if (mbedtls_ssl_set_session(&t->ssl, &c->saved) != 0) {
		gs_log_debug("tls: cannot offer the saved session to %s, full handshake",
			     t->server_name ? t->server_name : "");
		return;
	}
	t->offered = gs_xmalloc(c->saved.ticket_len);
	memcpy(t->offered, c->saved.ticket, c->saved.ticket_len);
	t->offered_len = c->saved.ticket_len;
}

/*
 * Client, after a full handshake: the config's saved session becomes this one if the server gave a
 * ticket in it, else none (a server that stopped issuing tickets would refuse the old one every time).
 * When the server refused the offered ticket and sent no new one, mbedTLS 2.28 leaves the offered
 * ticket in the new session, next to the new master secret: resuming that pair would fail (the ticket
 * holds the old secret), so a ticket equal to the offered one is not a ticket of this handshake.
 */
static void save_session(struct gs_tls *t)
{
	struct gs_tls_config *c = t->cfg;
	mbedtls_ssl_session s;

	if (c->endpoint != MBEDTLS_SSL_IS_CLIENT)
		return;
	saved_forget(c);
	mbedtls_ssl_session_init(&s);
	if (mbedtls_ssl_get_session(&t->ssl, &s) != 0 || !s.ticket || !s.ticket_len ||
	    offered_ticket(t, s.ticket, s.ticket_len)) {
		mbedtls_ssl_session_free(&s);
		return;
	}
	c->saved = s; /* takes over its ticket and peer certificate */
	c->saved_name = gs_xstrdup(t->server_name ? t->server_name : "");
}

/* Client, after a failed handshake that offered the saved session: forget it if it is still saved, so
 * that a session the server cannot resume (whatever the reason) costs one failure, not every
 * connection's. The next handshake is full. */
static void forget_offered(struct gs_tls *t)
{
	struct gs_tls_config *c = t->cfg;

	if (c->saved_name && offered_ticket(t, c->saved.ticket, c->saved.ticket_len))
		saved_forget(c);
}

static void handshake_complete(struct gs_tls *t)
{
	t->done = 1;
	if (t->resumed) {
		t->cfg->stats.resumed++;
	} else {
		t->cfg->stats.full++;
		save_session(t);
	}
}

int gs_tls_handshake(struct gs_tls *t)
{
	int r = 0;

	if (t->fatal)
		return t->fatal;
	if (t->done)
		return 1;
	if (!t->started) {
		t->started = 1;
		offer_session(t);
	}
	/* mbedtls_ssl_handshake() is this loop; stepping it ourselves reads whether the peer resumed
	 * before the last step frees the handshake parameters. A client's flag is set by set_session and
	 * settled by the ServerHello; a server's by a ticket that parsed. */
	while (t->ssl.state != MBEDTLS_SSL_HANDSHAKE_OVER) {
		r = mbedtls_ssl_handshake_step(&t->ssl);
		if (t->ssl.handshake)
			t->resumed = t->ssl.handshake->resume;
		if (r != 0)
			break;
	}
	if (r == 0) {
		handshake_complete(t);
		return 1;
	}
	if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE)
		return 0;
	forget_offered(t);
	return fail(t, r);
}

int gs_tls_handshake_done(const struct gs_tls *t)
{
	return t->done;
}

int gs_tls_resumed(const struct gs_tls *t)
{
	return t->done && t->resumed;
}

int gs_tls_read(struct gs_tls *t, char *buf, size_t len)
{
	int r;

	if (!t->done) {
		r = gs_tls_handshake(t);
		if (r <= 0)
			return r;
	}
	if (t->fatal)
		return t->fatal;
	if (len > INT_MAX)
		len = INT_MAX;
	/* WANT_READ can also follow a record that carried no data (a refused renegotiation request):
	 * go on while input is left. Each round consumes a record, the bound is only a safety net. */
	for (int i = 0; i < 64; i++) {
		r = mbedtls_ssl_read(&t->ssl, (unsigned char *)buf, len);
		if (r > 0)
			return r;
		if (r != MBEDTLS_ERR_SSL_WANT_READ && r != MBEDTLS_ERR_SSL_WANT_WRITE && r != 0)
			return fail(t, r);
		if (!len || (t->in.len == t->in_off && !mbedtls_ssl_check_pending(&t->ssl)))
			break;
	}
	return 0;
}

int gs_tls_write(struct gs_tls *t, const char *data, size_t len)
{
	size_t off = 0;

	if (t->fatal)
		return t->fatal;
	if (!t->done)
		return -EINVAL;
	while (off < len) {
		size_t n = len - off > INT_MAX ? INT_MAX : len - off;
		int r = mbedtls_ssl_write(&t->ssl, (const unsigned char *)data + off, n);
		/* bio_send takes everything, so there is no WANT_WRITE to wait out: anything but
		 * progress is fatal. */
		if (r <= 0)
			return fail(t, r < 0 ? r : MBEDTLS_ERR_SSL_INTERNAL_ERROR);
		off += (size_t)r;
	}
	return 0;
}

void gs_tls_close_notify(struct gs_tls *t)
{
	if (!t->fatal && t->done)
		mbedtls_ssl_close_notify(&t->ssl);
}

int gs_tls_flush(struct gs_tls *t, struct gs_buf *out)
{
	int r;

	if (!t->out.len)
		return 0;
	r = gs_buf_append(out, t->out.data, t->out.len);
	if (r < 0)
		return r;
	gs_buf_reset(&t->out);
	return 0;
}

const char *gs_tls_error(const struct gs_tls *t)
{
	return t->err;
}

const char *gs_tls_version(const struct gs_tls *t)
{
	return t->done ? mbedtls_ssl_get_version(&t->ssl) : NULL;
}

const char *gs_tls_ciphersuite(const struct gs_tls *t)
{
	return t->done ? mbedtls_ssl_get_ciphersuite(&t->ssl) : NULL;
}
