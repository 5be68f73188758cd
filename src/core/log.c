/*
 * log.c: see log.h. Lines are formatted into one stack buffer and written with a single write(2),
 * so lines from a crashing process or a shared stderr are never interleaved mid-line. In batches
 * (gs_log_batch) whole lines gather in one buffer instead, written whole by gs_log_flush.
 */
#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GS_LOG_LINE_MAX 4096

enum gs_log_level gs_log_level_current = GS_LOG_INFO;
static enum gs_log_format log_format = GS_LOG_TEXT;
static gs_log_sink_cb log_sink;
static void *log_sink_data;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

/* Batches: whole lines only; invariant batch_len <= sizeof(batch_buf). */
static int batching;
static char batch_buf[GS_LOG_BATCH_MAX];
static size_t batch_len;

/* The timestamp's seconds as last formatted ("2026-11-27T19:44:23"), for the second it names. */
static time_t ts_sec = (time_t)-1;
static char ts_text[32];
static size_t ts_len;

int gs_log_level_parse(const char *s, enum gs_log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum gs_log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

int gs_log_format_parse(const char *s, enum gs_log_format *out)
{
	if (strcmp(s, "text") == 0)
		*out = GS_LOG_TEXT;
	else if (strcmp(s, "json") == 0)
		*out = GS_LOG_JSON;
	else
		return -EINVAL;
	return 0;
}

void gs_log_setup(enum gs_log_level level, enum gs_log_format format)
{
	gs_log_level_current = level;
	log_format = format;
}

void gs_log_set_sink(gs_log_sink_cb cb, void *data)
{
	log_sink = cb;
	log_sink_data = data;
}

/* Appends s to out as the inside of a JSON string. Returns the new length, capped at cap - 1. */
static size_t json_escape(char *out, size_t len, size_t cap, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s && len + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[len++] = '\\';
			out[len++] = (char)c;
		} else if (c < 0x20) {
			memcpy(out + len, "\\u00", 4);
			out[len + 4] = hex[c >> 4];
			out[len + 5] = hex[c & 15];
			len += 6;
		} else {
			out[len++] = (char)c;
		}
	}
	out[len] = '\0';
	return len;
}

static void write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* nowhere to report it */
		p += w;
		n -= (size_t)w;
	}
}

void gs_log_flush(void)
{
	write_all(batch_buf, batch_len);
	batch_len = 0;
}

void gs_log_batch(int on)
{
	static int registered;

	if (!on)
		gs_log_flush();
	else if (!registered && atexit(gs_log_flush) == 0)
		registered = 1; /* a return from main or exit() writes what is left */
	batching = on;
}

/* One line out: at once, or into the batch. A warning or an error goes out at once with the lines
 * before it (a crash right after one loses nothing that led to it). */
static void log_put(enum gs_log_level level, const char *line, size_t n)
{
	if (!batching) {
		write_all(line, n);
		return;
	}
	if (batch_len + n > sizeof(batch_buf))
		gs_log_flush();
	if (n > sizeof(batch_buf)) {
		write_all(line, n);
		return;
	}
	memcpy(batch_buf + batch_len, line, n);
	batch_len += n;
	if (level <= GS_LOG_WARN)
		gs_log_flush();
}

static void log_vemit(enum gs_log_level level, const char *file, int line, uint64_t suppressed, const char *fmt,
		      va_list ap)
{
	char msg[GS_LOG_LINE_MAX];
	char out[GS_LOG_LINE_MAX * 2];
	char ts[40];
	struct timespec now;
	struct tm tm;
	size_t n;
	int saved_errno = errno;

	int m = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (suppressed) {
		size_t at = m < 0 ? 0 : (size_t)m >= sizeof(msg) ? sizeof(msg) - 1 : (size_t)m;
		snprintf(msg + at, sizeof(msg) - at, " (%llu similar messages suppressed)",
			 (unsigned long long)suppressed);
	}

	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec != ts_sec) {
		gmtime_r(&now.tv_sec, &tm);
		ts_len = strftime(ts_text, sizeof(ts_text), "%Y-%m-%dT%H:%M:%S", &tm);
		ts_sec = now.tv_sec;
	}
	memcpy(ts, ts_text, ts_len);
	n = ts_len;
	snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", now.tv_nsec / 1000000);

	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;

	if (log_format == GS_LOG_JSON) {
		n = (size_t)snprintf(out, sizeof(out), "{\"ts\":\"%s\",\"level\":\"%s\",\"src\":\"%s:%d\",\"msg\":\"",
				     ts, level_names[level], base, line);
		n = json_escape(out, n, sizeof(out) - 3, msg);
		memcpy(out + n, "\"}\n", 3);
		n += 3;
	} else {
		int r = snprintf(out, sizeof(out), "%s %-5s %s (%s:%d)\n", ts, level_names[level], msg, base, line);
		n = r < 0 ? 0 : (size_t)r >= sizeof(out) ? sizeof(out) - 1 : (size_t)r;
	}

	log_put(level, out, n);
	if (log_sink)
		log_sink(level, msg, log_sink_data);
	errno = saved_errno;
}

void gs_log_emit(enum gs_log_level level, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vemit(level, file, line, 0, fmt, ap);
	va_end(ap);
}

void gs_log_emit_counted(enum gs_log_level level, const char *file, int line, uint64_t suppressed, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vemit(level, file, line, suppressed, fmt, ap);
	va_end(ap);
}

int gs_log_limit_take(struct gs_log_limit *l, uint64_t now_ms, uint64_t *suppressed)
{
	*suppressed = 0;
	if (!l->started || now_ms - l->window_start >= l->window_ms) {
		l->started = 1;
		l->window_start = now_ms;
		l->used = 0;
	}
	if (l->used >= l->burst) {
		l->suppressed++;
		return 0;
	}
	l->used++;
	*suppressed = l->suppressed;
	l->suppressed = 0;
	return 1;
}

uint64_t gs_log_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void gs_log_assert_fail(const char *expr, const char *file, int line)
{
	gs_log_emit(GS_LOG_ERROR, file, line, "assertion failed: %s", expr);
	abort();
}
