/*
 * log.h: leveled, one-line-per-event logging to stderr, as text or JSON.
 *
 * The macros test the level before evaluating their arguments, so a disabled debug line costs one
 * comparison. Format strings are checked by the compiler. Messages should name the object they speak
 * of ("pod ns/name", "conn 3 127.0.0.1:6443").
 *
 *   gs_log_info("bound pod %s/%s to %s", ns, name, node);
 *
 * Not thread-safe by design: everything runs on the loop thread.
 */
#ifndef GS_CORE_LOG_H
#define GS_CORE_LOG_H

#include <stdarg.h>
#include <stdint.h>

enum gs_log_level {
	GS_LOG_ERROR = 0,
	GS_LOG_WARN,
	GS_LOG_INFO,
	GS_LOG_DEBUG,
	GS_LOG_TRACE,
};

enum gs_log_format {
	GS_LOG_TEXT = 0,
	GS_LOG_JSON,
};

extern enum gs_log_level gs_log_level_current;

/* Parses "error", "warn", "info", "debug", "trace". Returns 0, or -EINVAL for an unknown name. */
int gs_log_level_parse(const char *s, enum gs_log_level *out);
/* Parses "text" or "json". Returns 0, or -EINVAL. */
int gs_log_format_parse(const char *s, enum gs_log_format *out);

void gs_log_setup(enum gs_log_level level, enum gs_log_format format);

/* Use the macros below; this is their back end. */
void gs_log_emit(enum gs_log_level level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Batches, for a process that logs a line per object it handles (the daemon, a line per binding):
 * with gs_log_batch(1), lines at info and below gather in a buffer of GS_LOG_BATCH_MAX bytes and go
 * out in one write(2) at gs_log_flush(), which the caller runs once per turn of its loop before it
 * waits (main.c: a uv_prepare), or when the buffer is full. A warning or an error is written at once,
 * with what came before it. What a crash can lose is the info lines of the turn it happened in.
 * gs_log_batch(0) flushes and writes every line at once again (the default).
 */
#define GS_LOG_BATCH_MAX (64 * 1024)
void gs_log_batch(int on);
void gs_log_flush(void);

/* Test hook: every formatted line also goes to this callback (NULL to stop). */
typedef void (*gs_log_sink_cb)(enum gs_log_level level, const char *msg, void *data);
void gs_log_set_sink(gs_log_sink_cb cb, void *data);

#define GS_LOG_AT(lvl, ...)                                                  \
	do {                                                                 \
		if ((lvl) <= gs_log_level_current)                           \
			gs_log_emit((lvl), __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define gs_log_error(...) GS_LOG_AT(GS_LOG_ERROR, __VA_ARGS__)
#define gs_log_warn(...)  GS_LOG_AT(GS_LOG_WARN, __VA_ARGS__)
#define gs_log_info(...)  GS_LOG_AT(GS_LOG_INFO, __VA_ARGS__)
#define gs_log_debug(...) GS_LOG_AT(GS_LOG_DEBUG, __VA_ARGS__)
#define gs_log_trace(...) GS_LOG_AT(GS_LOG_TRACE, __VA_ARGS__)

/*
 * Rate-limited logging, for lines a peer can cause at will (one per refused connection...): at most
 * `burst` lines per window of `window_ms` per call site; the lines over it are dropped and counted,
 * and the next line written from that site carries " (K similar messages suppressed)". The count
 * is reported with the next line that passes, so a flood that stops leaves its count unreported
 * until the site logs again: what the line was about should also be a metric.
 *
 *   gs_log_limited(GS_LOG_WARN, 5, 10000, "http server %s: refusing %s", addr, peer);
 *
 * Each macro use has its own static limiter (loop thread only, like the rest of the logger).
 */
struct gs_log_limit {
	unsigned burst; /* lines per window */
	unsigned window_ms;
	uint64_t window_start; /* monotonic ms when the current window began */
	unsigned used;         /* lines written in the current window */
	uint64_t suppressed;   /* lines dropped since the last line written */
	int started;
};
/* clang-format off */
#define GS_LOG_LIMIT_INIT(burst, window_ms) {(burst), (window_ms), 0, 0, 0, 0}
/* clang-format on */

/*
 * Decides for one line at now_ms (monotonic). Returns 1: write it, and mention *suppressed lines
 * dropped before it (then forgotten); or 0: drop it (counted). Windows are fixed: a new one starts
 * at the first line at least window_ms after the current one began.
 */
int gs_log_limit_take(struct gs_log_limit *l, uint64_t now_ms, uint64_t *suppressed);
/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t gs_log_now_ms(void);
/* gs_log_emit with " (K similar messages suppressed)" appended when suppressed > 0. */
void gs_log_emit_counted(enum gs_log_level level, const char *file, int line, uint64_t suppressed, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define gs_log_limited(lvl, burst, window_ms, ...)                                                                   \
	do {                                                                                                         \
		static struct gs_log_limit gs_log_lim_ = GS_LOG_LIMIT_INIT(burst, window_ms);                        \
		uint64_t gs_log_sup_;                                                                                \
		if ((lvl) <= gs_log_level_current && gs_log_limit_take(&gs_log_lim_, gs_log_now_ms(), &gs_log_sup_)) \
			gs_log_emit_counted((lvl), __FILE__, __LINE__, gs_log_sup_, __VA_ARGS__);                    \
	} while (0)

/*
 * An invariant a header states, checked always (not only in debug builds): on failure, one error line
 * with the file, the line and the expression, then abort(). For conditions no outside input can cause.
 */
_Noreturn void gs_log_assert_fail(const char *expr, const char *file, int line);
#define GS_ASSERT(e) ((e) ? (void)0 : gs_log_assert_fail(#e, __FILE__, __LINE__))

#endif
