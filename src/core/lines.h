/*
 * lines.h: splits a byte stream into lines, for newline-delimited protocols (the Kubernetes watch
 * stream sends one JSON object per line).
 *
 * Bytes arrive in arbitrary pieces (a TLS record, a chunk, one byte); the splitter calls back once per
 * complete line, in order. A line ends at '\n'; a '\r' just before it is dropped, and empty lines are
 * skipped (they carry nothing in the protocols we speak). A line that reaches the splitter's cap
 * without a newline fails the stream with -E2BIG as soon as the cap is passed, without waiting for
 * the newline, so a peer cannot make us buffer more than the cap.
 *
 *   struct gs_lines s;
 *   gs_lines_init(&s, GS_LINE_MAX, on_line, ud);
 *   r = gs_lines_feed(&s, piece, n);   // as often as data comes
 *   gs_lines_free(&s);
 *
 * A line that arrives whole inside one piece is handed over in place (no copy); a line split across
 * pieces is gathered in an internal buffer first. Either way the callback sees (line, len), and the
 * line is NOT NUL-terminated: use the length.
 *
 * Framed mode (gs_lines_set_framed): the same splitter for length-prefixed records instead of
 * lines, each a 4-byte big-endian length then that many bytes (the Kubernetes protobuf watch stream,
 * apimachinery's framer). The callback gets each record's bytes; an empty record is delivered too; a
 * length over the cap fails the stream with -E2BIG as soon as the 4 bytes are in.
 */
#ifndef GS_CORE_LINES_H
#define GS_CORE_LINES_H

#include <stddef.h>

#include "core/buf.h"

/* Default cap on one line, not counting its '\n': the largest watch event we accept. */
#define GS_LINE_MAX ((size_t)16 * 1024 * 1024)

/*
 * Called synchronously from gs_lines_feed/flush for every complete line. line points into the
 * caller's piece or into the splitter's buffer and is valid only during the call. Return 0 to go on, or
 * a negative code to stop: feed returns that code and the splitter stays failed (see below).
 * The callback must not free the splitter nor feed it again (no re-entry); it may call reset.
 */
typedef int (*gs_line_cb)(const char *line, size_t len, void *ud);

struct gs_lines {
	struct gs_buf buf; /* the unfinished line */
	size_t max;        /* cap on a line's length */
	gs_line_cb cb;
	void *ud;
	int err;             /* sticky: the first failure, 0 while healthy */
	int framed;          /* 4-byte big-endian length prefixes instead of newlines */
	unsigned long lines; /* lines delivered so far (for logs and tests) */
};

/* max 0 means GS_LINE_MAX. Cannot fail; allocates nothing until a line spans pieces. */
void gs_lines_init(struct gs_lines *s, size_t max, gs_line_cb cb, void *ud);

/*
 * Feeds n bytes. Returns 0 when every complete line was delivered (the rest is kept), or <0: -E2BIG for
 * a line over the cap, -ENOMEM, or the callback's own code. After a failure the splitter is failed:
 * every later feed returns the same code without calling back, until gs_lines_reset().
 */
int gs_lines_feed(struct gs_lines *s, const char *p, size_t n);

/* Switches to (framed 1) or from (0) framed mode; call between records (right after init or reset). */
void gs_lines_set_framed(struct gs_lines *s, int framed);

/* Bytes of an unfinished line held so far (a stream that ends with this > 0 was cut mid-line). */
size_t gs_lines_pending(const struct gs_lines *s);

/*
 * Delivers the unfinished line, if any, as if a newline followed it (for protocols whose last line may
 * lack one). Returns as feed does.
 */
int gs_lines_flush(struct gs_lines *s);

/* Forgets any unfinished line and a failure; keeps cap, callback and memory. */
void gs_lines_reset(struct gs_lines *s);

/* Frees the buffer. Safe after init, and twice. */
void gs_lines_free(struct gs_lines *s);

#endif
