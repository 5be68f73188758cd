/*
 * tls_gen.c: gs_tls_generate(), certificates for the webhook's self-signed mode (see tls_gen.h and
 * docs/deploy.md, "Certificates").
 *
 * mbedTLS 2.28 writes certificates but has no helper for subjectAltName or extendedKeyUsage, so those
 * two extensions are DER-encoded here with mbedtls_asn1_write_* (which writes backwards, from the end
 * of a buffer) and attached with mbedtls_x509write_crt_set_extension().
 */
#include "core/tls_gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/asn1write.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/x509_crt.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/tls.h"
#include "core/tls_int.h"

#define GEN_CN_MAX   64 /* X.520 ub-common-name */
#define GEN_NAME_MAX 253

static int valid_dns_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > GEN_NAME_MAX)
		return 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '.' || c == '_' || c == '*'))
			return 0;
	}
	return 1;
}

/*
 * subjectAltName value: GeneralNames ::= SEQUENCE OF GeneralName, dNSName [2] IA5String or iPAddress
 * [7] OCTET STRING (4 or 16 bytes) for entries that are IP literals. Written into the end of buf;
 * returns the length (the DER starts at buf + size - length) or a negative mbedTLS code.
 */
static int san_der(const char *const *names, unsigned char *buf, size_t size)
{
	unsigned char *p = buf + size, ip[16];
	size_t len = 0, count = 0;
	int ret;

	while (names[count])
		count++;
	while (count--) { /* backwards, so the certificate lists them in the caller's order */
		const char *name = names[count];
		int iplen = gs_tls__parse_ip(name, ip);
		if (iplen)
			MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_tagged_string(&p, buf,
										   MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7,
										   (const char *)ip, (size_t)iplen));
		else
			MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_tagged_string(&p, buf,
										   MBEDTLS_ASN1_CONTEXT_SPECIFIC | 2,
										   name, strlen(name)));
	}
	MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_len(&p, buf, len));
	MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_tag(&p, buf, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE));
	return (int)len;
}

/* extendedKeyUsage value: SEQUENCE { id-kp-serverAuth } (client: id-kp-clientAuth). */
static int eku_der(unsigned char *buf, size_t size, int client)
{
	unsigned char *p = buf + size;
	size_t len = 0;
	int ret;

	if (client)
		MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_oid(&p, buf, MBEDTLS_OID_CLIENT_AUTH,
								 sizeof(MBEDTLS_OID_CLIENT_AUTH) - 1));
	else
		MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_oid(&p, buf, MBEDTLS_OID_SERVER_AUTH,
								 sizeof(MBEDTLS_OID_SERVER_AUTH) - 1));
	MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_len(&p, buf, len));
	MBEDTLS_ASN1_CHK_ADD(len, mbedtls_asn1_write_tag(&p, buf, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE));
	return (int)len;
}

/*
 * The issuer name of a certificate must equal its issuer's subject. Rather than printing the subject
 * and parsing it back (mbedtls_x509_dn_gets does not escape, and the string types would change), copy
 * the parsed attributes. mbedtls_x509_write_names() writes the list head last, so reverse it.
 * Multi-valued RDNs are flattened (rare in CA names).
 */
static void copy_issuer_name(const mbedtls_x509_name *src, mbedtls_asn1_named_data **out)
{
	for (const mbedtls_x509_name *n = src; n; n = n->next) {
		mbedtls_asn1_named_data *d;
		if (!n->oid.p)
			continue;
		d = mbedtls_calloc(1, sizeof(*d)); /* mbedTLS frees the list: its allocator */
		if (!d)
			gs_oom(sizeof(*d));
		d->next = *out;
		*out = d;
		d->oid.tag = n->oid.tag;
		d->val.tag = n->val.tag;
		d->oid.p = mbedtls_calloc(1, n->oid.len);
		d->val.p = mbedtls_calloc(1, n->val.len ? n->val.len : 1);
		if (!d->oid.p || !d->val.p)
			gs_oom(n->oid.len + n->val.len);
		d->oid.len = n->oid.len;
		d->val.len = n->val.len;
		memcpy(d->oid.p, n->oid.p, n->oid.len);
		memcpy(d->val.p, n->val.p, n->val.len);
	}
}

static int format_time(int64_t t, char out[16])
{
	struct tm tm;
	time_t tt = (time_t)t;
	if (t < 0 || !gmtime_r(&tt, &tm) || tm.tm_year + 1900 > 9999)
		return -EINVAL;
	return strftime(out, 16, "%Y%m%d%H%M%S", &tm) == 14 ? 0 : -EINVAL;
}

/* "CN=<cn>" with the one escape mbedtls_x509_string_to_names() knows: "\,". */
static int subject_string(const char *cn, char *out, size_t size)
{
	size_t o = 0;
	if (size < 4)
		return -EINVAL;
	memcpy(out, "CN=", 3);
	o = 3;
	for (; *cn; cn++) {
		unsigned char c = (unsigned char)*cn;
		if (c < 0x20 || c == 0x7f || c == '\\')
			return -EINVAL;
		if (o + 3 >= size)
			return -EINVAL;
		if (c == ',')
			out[o++] = '\\';
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

static int check_req(const struct gs_tls_cert_req *req, char *err, size_t errlen)
{
	if (!req->common_name || !*req->common_name || strlen(req->common_name) > GEN_CN_MAX) {
		gs_tls__seterr(err, errlen, "common name must have 1 to %d characters", GEN_CN_MAX);
		return -EINVAL;
	}
	if (req->not_after <= req->not_before) {
		gs_tls__seterr(err, errlen, "not_after must be later than not_before");
		return -EINVAL;
	}
	for (const char *const *n = req->dns_names; n && *n; n++) {
		unsigned char ip[16];
		if (!gs_tls__parse_ip(*n, ip) && !valid_dns_name(*n)) {
			gs_tls__seterr(err, errlen, "subjectAltName \"%s\" is neither a DNS name nor an IP address",
				       *n);
			return -EINVAL;
		}
	}
	return 0;
}

/* One certificate being made: what gs_tls_generate's steps share. */
struct gen {
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	mbedtls_pk_context key, ikey; /* the new key pair; the issuer's key (when not self-signed) */
	mbedtls_x509_crt icrt;        /* the issuer's certificate (when not self-signed) */
	mbedtls_x509write_cert w;
	mbedtls_mpi serial;
	unsigned char *der, *pem; /* the subjectAltName's DER; the PEM output */
	size_t der_size, pem_size;
	char *err;
	size_t errlen;
};

/* An mbedTLS failure r at what: the message into err, and -ENOMEM or -EINVAL. */
static int gen_fail(struct gen *g, int r, const char *what)
{
	char msg[128];
	mbedtls_strerror(r, msg, sizeof(msg));
	gs_tls__seterr(g->err, g->errlen, "%s: %s", what, msg);
	return gs_tls__errno(r) == -ENOMEM ? -ENOMEM : -EINVAL;
}

/* What can be refused before anything is made: the request, the issuer pair, the subject, the dates. */
static int gen_check(const struct gs_tls_cert_req *req, const char *issuer_cert, const char *issuer_key, char *subject,
		     size_t subject_size, char *nb, char *na, char *err, size_t errlen)
{
	int r = check_req(req, err, errlen);
	if (r < 0)
		return r;
	if (!issuer_cert != !issuer_key) {
		gs_tls__seterr(err, errlen, "issuer certificate and key must be given together");
		return -EINVAL;
	}
	if (subject_string(req->common_name, subject, subject_size) < 0) {
		gs_tls__seterr(err, errlen, "common name contains a control character or a backslash");
		return -EINVAL;
	}
	if (format_time(req->not_before, nb) < 0 || format_time(req->not_after, na) < 0) {
		gs_tls__seterr(err, errlen, "validity must lie between 1970 and 9999");
		return -EINVAL;
	}
	return 0;
}

static void gen_init(struct gen *g, const struct gs_tls_cert_req *req, char *err, size_t errlen)
{
	mbedtls_entropy_init(&g->entropy);
	mbedtls_ctr_drbg_init(&g->drbg);
	mbedtls_pk_init(&g->key);
	mbedtls_pk_init(&g->ikey);
	mbedtls_x509_crt_init(&g->icrt);
	mbedtls_x509write_crt_init(&g->w);
	mbedtls_mpi_init(&g->serial);
	g->der_size = 64;
	for (const char *const *n = req->dns_names; n && *n; n++)
		g->der_size += strlen(*n) + 8;
	g->pem_size = 4096 + 2 * g->der_size;
	g->der = gs_xmalloc(g->der_size);
	g->pem = gs_xmalloc(g->pem_size);
	g->err = err;
	g->errlen = errlen;
}

static void gen_free(struct gen *g)
{
	mbedtls_platform_zeroize(g->pem, g->pem_size);
	free(g->pem);
	free(g->der);
	mbedtls_mpi_free(&g->serial);
	mbedtls_x509write_crt_free(&g->w);
	mbedtls_x509_crt_free(&g->icrt);
	mbedtls_pk_free(&g->ikey);
	mbedtls_pk_free(&g->key);
	mbedtls_ctr_drbg_free(&g->drbg);
	mbedtls_entropy_free(&g->entropy);
}

/* The random generator seeded, and a fresh P-256 key pair. */
static int gen_key(struct gen *g)
{
	static const char pers[] = "gs_tls_generate";
	int r = mbedtls_ctr_drbg_seed(&g->drbg, mbedtls_entropy_func, &g->entropy, (const unsigned char *)pers,
				      sizeof(pers) - 1);
	if (r != 0)
		return gen_fail(g, r, "random generator");
	if ((r = mbedtls_pk_setup(&g->key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY))) != 0 ||
	    (r = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(g->key), mbedtls_ctr_drbg_random,
				     &g->drbg)) != 0)
		return gen_fail(g, r, "key generation");
	return 0;
}

/* Subject, and issuer: the given CA pair (checked: matching, a CA), or the new key itself. */
static int gen_names(struct gen *g, const char *subject, const char *issuer_cert, const char *issuer_key)
{
	int r;
	mbedtls_x509write_crt_set_version(&g->w, MBEDTLS_X509_CRT_VERSION_3);
	mbedtls_x509write_crt_set_md_alg(&g->w, MBEDTLS_MD_SHA256);
	mbedtls_x509write_crt_set_subject_key(&g->w, &g->key);
	if ((r = mbedtls_x509write_crt_set_subject_name(&g->w, subject)) != 0)
		return gen_fail(g, r, "subject name");
	if (!issuer_cert) {
		mbedtls_x509write_crt_set_issuer_key(&g->w, &g->key);
		if ((r = mbedtls_x509write_crt_set_issuer_name(&g->w, subject)) != 0)
			return gen_fail(g, r, "issuer name");
		return 0;
	}
	r = gs_tls__parse_crt(&g->icrt, "issuer certificate", issuer_cert, strlen(issuer_cert) + 1, 0, g->err,
			      g->errlen);
	if (r == 0)
		r = gs_tls__parse_key(&g->ikey, "issuer key", issuer_key, strlen(issuer_key) + 1, g->err, g->errlen);
	if (r < 0)
		return r;
	if (mbedtls_pk_check_pair(&g->icrt.pk, &g->ikey) != 0) {
		gs_tls__seterr(g->err, g->errlen, "issuer certificate and issuer key do not match");
		return -EINVAL;
	}
	if (!g->icrt.ca_istrue) {
		gs_tls__seterr(g->err, g->errlen, "issuer certificate is not a CA (basicConstraints)");
		return -EINVAL;
	}
	copy_issuer_name(&g->icrt.subject, &g->w.issuer);
	mbedtls_x509write_crt_set_issuer_key(&g->w, &g->ikey);
	return 0;
}

/* A positive 128-bit random serial (RFC 5280 allows 20 octets; the top bit clear keeps it positive
 * without a leading zero, the next one set keeps the length fixed), and the validity. */
static int gen_serial(struct gen *g, const char *nb, const char *na)
{
	unsigned char rnd[16];
	int r = mbedtls_ctr_drbg_random(&g->drbg, rnd, sizeof(rnd));
	if (r != 0)
		return gen_fail(g, r, "serial");
	rnd[0] = (unsigned char)((rnd[0] & 0x7f) | 0x40);
	if ((r = mbedtls_mpi_read_binary(&g->serial, rnd, sizeof(rnd))) != 0 ||
	    (r = mbedtls_x509write_crt_set_serial(&g->w, &g->serial)) != 0 ||
	    (r = mbedtls_x509write_crt_set_validity(&g->w, nb, na)) != 0)
		return gen_fail(g, r, "serial or validity");
	return 0;
}

/* basicConstraints (critical for a CA), key identifiers, keyUsage (critical), and for a leaf
 * extendedKeyUsage serverAuth; then subjectAltName. */
static int gen_extensions(struct gen *g, const struct gs_tls_cert_req *req)
{
	unsigned char small[64];
	int ku = req->is_ca
			 ? MBEDTLS_X509_KU_DIGITAL_SIGNATURE | MBEDTLS_X509_KU_KEY_CERT_SIGN | MBEDTLS_X509_KU_CRL_SIGN
			 : MBEDTLS_X509_KU_DIGITAL_SIGNATURE;
	int r;
	if ((r = mbedtls_x509write_crt_set_basic_constraints(&g->w, req->is_ca, -1)) != 0 ||
	    (r = mbedtls_x509write_crt_set_subject_key_identifier(&g->w)) != 0 ||
	    (r = mbedtls_x509write_crt_set_authority_key_identifier(&g->w)) != 0 ||
	    (r = mbedtls_x509write_crt_set_key_usage(&g->w, (unsigned int)ku)) != 0)
		return gen_fail(g, r, "extensions");
	if (!req->is_ca) {
		r = eku_der(small, sizeof(small), req->client);
		if (r > 0)
			r = mbedtls_x509write_crt_set_extension(&g->w, MBEDTLS_OID_EXTENDED_KEY_USAGE,
								sizeof(MBEDTLS_OID_EXTENDED_KEY_USAGE) - 1, 0,
								small + sizeof(small) - r, (size_t)r);
		if (r != 0)
			return gen_fail(g, r, "extendedKeyUsage");
	}
	if (req->dns_names && req->dns_names[0]) {
		r = san_der(req->dns_names, g->der, g->der_size);
		if (r > 0)
			r = mbedtls_x509write_crt_set_extension(&g->w, MBEDTLS_OID_SUBJECT_ALT_NAME,
								sizeof(MBEDTLS_OID_SUBJECT_ALT_NAME) - 1, 0,
								g->der + g->der_size - r, (size_t)r);
		if (r != 0)
			return gen_fail(g, r, "subjectAltName");
	}
	return 0;
}

/* The certificate signed and the key, both as PEM copies (the key's zeroed on the way out). */
static int gen_write(struct gen *g, char **cert_pem, char **key_pem)
{
	int r = mbedtls_x509write_crt_pem(&g->w, g->pem, g->pem_size, mbedtls_ctr_drbg_random, &g->drbg);
	if (r != 0)
		return gen_fail(g, r, "signing");
	*cert_pem = gs_xstrdup((const char *)g->pem);
	if ((r = mbedtls_pk_write_key_pem(&g->key, g->pem, g->pem_size)) != 0)
		return gen_fail(g, r, "key encoding");
	*key_pem = gs_xstrdup((const char *)g->pem);
	return 0;
}

int gs_tls_generate(const struct gs_tls_cert_req *req, const char *issuer_cert, const char *issuer_key, char **cert_pem,
		    char **key_pem, char *err, size_t errlen)
{
	char subject[3 + 2 * GEN_CN_MAX + 1], nb[16], na[16];
	struct gen g;
	int r;

	GS_ASSERT(req && cert_pem && key_pem);
	*cert_pem = NULL;
	*key_pem = NULL;
	r = gen_check(req, issuer_cert, issuer_key, subject, sizeof(subject), nb, na, err, errlen);
	if (r < 0)
		return r;
	gen_init(&g, req, err, errlen);
	if ((r = gen_key(&g)) == 0 && (r = gen_names(&g, subject, issuer_cert, issuer_key)) == 0 &&
	    (r = gen_serial(&g, nb, na)) == 0 && (r = gen_extensions(&g, req)) == 0)
		r = gen_write(&g, cert_pem, key_pem);
	if (r < 0) {
		free(*cert_pem);
		if (*key_pem)
			mbedtls_platform_zeroize(*key_pem, strlen(*key_pem));
		free(*key_pem);
		*cert_pem = NULL;
		*key_pem = NULL;
	}
	gen_free(&g);
	return r;
}
