/*
 * slurp.h: a whole file read into memory for a unit test (include after cmocka.h). The tests run from
 * the repository root; a missing file fails the test, naming it.
 */
#ifndef GS_TEST_SLURP_H
#define GS_TEST_SLURP_H

#include <stdio.h>
#include <stdlib.h>

/* path's bytes, NUL-terminated, malloc'd; *len (when len) their count. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (run from the repository root)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	char *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return p;
}

#endif
