/*
 * alloc.h: allocations that cannot fail.
 *
 * The rule (docs/architecture.md, "Allocation"): an allocation whose size no outside input controls
 * (a record of fixed size, a copy of a name from our own options or kubeconfig, a table we size
 * ourselves) uses these, and a failure aborts with one error line naming the caller's file:line and
 * the size. An allocation a peer sizes (a request or response body, a decoded list, an annotation)
 * uses malloc and friends directly, under a named cap, and fails only that request or connection
 * (-ENOMEM, -E2BIG).
 *
 * gs_xmalloc(0) and gs_xcalloc(0, size) return a unique pointer, never NULL; gs_xcalloc and
 * gs_xreallocarray check the multiplication; gs_xrealloc(p, 0) is gs_xrealloc(p, 1).
 */
#ifndef GS_CORE_ALLOC_H
#define GS_CORE_ALLOC_H

#include <stddef.h>

void *gs_xmalloc_at(size_t n, const char *file, int line);
void *gs_xcalloc_at(size_t n, size_t size, const char *file, int line);
void *gs_xrealloc_at(void *p, size_t n, const char *file, int line);
void *gs_xreallocarray_at(void *p, size_t n, size_t size, const char *file, int line);
char *gs_xstrdup_at(const char *s, const char *file, int line);
char *gs_xstrndup_at(const char *s, size_t n, const char *file, int line);
/* Reports the failed allocation of n bytes (0: unknown) at file:line, then abort(). */
_Noreturn void gs_oom_at(size_t n, const char *file, int line);

/* Lower case, like assert: they read as the functions they stand for. */
#define gs_xmalloc(n)                gs_xmalloc_at((n), __FILE__, __LINE__)
#define gs_xcalloc(n, size)          gs_xcalloc_at((n), (size), __FILE__, __LINE__)
#define gs_xrealloc(p, n)            gs_xrealloc_at((p), (n), __FILE__, __LINE__)
#define gs_xreallocarray(p, n, size) gs_xreallocarray_at((p), (n), (size), __FILE__, __LINE__)
#define gs_xstrdup(s)                gs_xstrdup_at((s), __FILE__, __LINE__)
#define gs_xstrndup(s, n)            gs_xstrndup_at((s), (n), __FILE__, __LINE__)
/* For a library call that allocates inside (an hmap insert...) and reports only failure: gs_oom(0). */
#define gs_oom(n)                    gs_oom_at((n), __FILE__, __LINE__)

#endif
