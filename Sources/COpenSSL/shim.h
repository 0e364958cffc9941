#ifndef CHECKLISTS_COPENSSL_SHIM_H
#define CHECKLISTS_COPENSSL_SHIM_H
/* OpenSSL 3 (Debian's libssl-dev). Swift cannot call C macros, so the few
 * macros ChecklistTLS needs are wrapped in static inline functions here. */
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
/* Signature verification of signed tokens (ChecklistJWT). */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/crypto.h>

static inline int copenssl_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int copenssl_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long copenssl_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline long copenssl_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline int copenssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* What a memory BIO's read returns when it is empty: -1 (with the retry
 * flag: "no data yet") or 0 (end of stream). */
static inline long copenssl_BIO_set_mem_eof_return(BIO *bio, int value) {
    return BIO_set_mem_eof_return(bio, value);
}

static inline void copenssl_free(void *pointer) {
    OPENSSL_free(pointer);
}

/* Constants defined as macros with casts, which Swift does not import. */
static const uint64_t copenssl_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const uint64_t copenssl_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t copenssl_OP_NO_TICKET = SSL_OP_NO_TICKET;
static const uint64_t copenssl_OP_CIPHER_SERVER_PREFERENCE = SSL_OP_CIPHER_SERVER_PREFERENCE;
static const long copenssl_MODE_RELEASE_BUFFERS = SSL_MODE_RELEASE_BUFFERS;
static const long copenssl_SESS_CACHE_OFF = SSL_SESS_CACHE_OFF;
static const unsigned long copenssl_XN_FLAG_RFC2253 = XN_FLAG_RFC2253;
/* EVP_PKEY_fromdata's selection: a public key only. */
static const int copenssl_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;
static const int copenssl_EVP_PKEY_ED25519 = EVP_PKEY_ED25519;
#endif
