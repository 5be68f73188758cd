/*
 * http.h: HTTP/1.1 over TCP or TLS on the libuv loop, parsed by llhttp (no lenient flags).
 *
 * Two halves sharing one connection layer (conn.c: uv_tcp_t -> optional gs_tls -> llhttp):
 *   - a client: a keep-alive pool for one origin, requests queued when every connection is busy;
 *   - a server: accepts, parses requests with hard limits, hands complete requests to a handler.
 *
 * Everything runs on the loop thread. No callback ever fires synchronously from inside the call that
 * registered it. TCP_NODELAY is set on every socket.
 *
 * This header holds what both halves share; each half has its own (http_client.h for http_client.c,
 * http_server.h for http_server.c), both included below for the callers of either.
 */
#ifndef GS_CORE_HTTP_H
#define GS_CORE_HTTP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/tls.h"

struct gs_http_header {
	const char *name;
	const char *value;
};

#include "core/http_client.h"
#include "core/http_server.h"

#endif
