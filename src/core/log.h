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

/* Test hook: every formatted line also goes to this callback (NULL to stop). */
typedef void (*gs_log_sink_cb)(enum gs_log_level level, const char *msg, void *data);
void gs_log_set_sink(gs_log_sink_cb cb, void *data);

#define GS_LOG_AT(lvl, ...)                                                                        \
	do {                                                                                       \
		if ((lvl) <= gs_log_level_current)                                                 \
			gs_log_emit((lvl), __FILE__, __LINE__, __VA_ARGS__);                       \
	} while (0)

#define gs_log_error(...) GS_LOG_AT(GS_LOG_ERROR, __VA_ARGS__)
#define gs_log_warn(...)  GS_LOG_AT(GS_LOG_WARN, __VA_ARGS__)
#define gs_log_info(...)  GS_LOG_AT(GS_LOG_INFO, __VA_ARGS__)
#define gs_log_debug(...) GS_LOG_AT(GS_LOG_DEBUG, __VA_ARGS__)
#define gs_log_trace(...) GS_LOG_AT(GS_LOG_TRACE, __VA_ARGS__)

/*
 * An invariant a header states, checked always (not only in debug builds): on failure, one error line
 * with the file, the line and the expression, then abort(). For conditions no outside input can cause.
 */
_Noreturn void gs_assert_fail(const char *expr, const char *file, int line);
#define GS_ASSERT(e) ((e) ? (void)0 : gs_assert_fail(#e, __FILE__, __LINE__))

#endif
