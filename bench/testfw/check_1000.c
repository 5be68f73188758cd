/* 1,000 trivial tests under Check, in its default fork mode: the framework's own cost. */
#include <check.h>
#include <stdlib.h>

START_TEST(t)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("s");
	TCase *tc = tcase_create("c");
	for (int i = 0; i < 1000; i++)
		tcase_add_test(tc, t);
	suite_add_tcase(s, tc);
	SRunner *r = srunner_create(s);
	srunner_run_all(r, CK_SILENT);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed != 0;
}
