/* 1,000 trivial tests under cmocka: the framework's own cost (see docs/decisions.md). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>

static void t(void **state)
{
	assert_int_equal(1, 1);
}

int main(void)
{
	struct CMUnitTest *tests = calloc(1000, sizeof(*tests));
	for (int i = 0; i < 1000; i++)
		tests[i] = (struct CMUnitTest){"t", t, NULL, NULL, NULL};
	int r = _cmocka_run_group_tests("g", tests, 1000, NULL, NULL);
	free(tests);
	return r;
}
