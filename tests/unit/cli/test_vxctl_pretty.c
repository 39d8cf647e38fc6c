/* Unit tests for `-j -p` (src/cli/vxctl_pretty.c): the layout of
 * iproute2 6.1's lib/json_writer.c in pretty mode, strings copied as they
 * are, and text that is not JSON refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/vxctl_pretty.h"

static void check(const char *in, const char *want)
{
	char *out = NULL;
	assert_int_equal(vxctl_json_pretty(in, strlen(in), &out), 0);
	if (strcmp(out, want))
		fail_msg("\"%s\"\n  gave \"%s\"\n  want \"%s\"", in, out, want);
	free(out);
}

static void test_layout(void **state)
{
	(void)state;
	/* What json_writer prints for tc -j -p filter show with two rules:
	 * keys on their own lines, objects of an array joined by "},{". */
	check("[{\"protocol\":\"ip\",\"pref\":1,\"options\":{\"keys\":{\"ip_proto\":\"tcp\"}}},"
	      "{\"pref\":2}]\n",
	      "[{\n"
	      "        \"protocol\": \"ip\",\n"
	      "        \"pref\": 1,\n"
	      "        \"options\": {\n"
	      "            \"keys\": {\n"
	      "                \"ip_proto\": \"tcp\"\n"
	      "            }\n"
	      "        }\n"
	      "    },{\n"
	      "        \"pref\": 2\n"
	      "    }\n"
	      "]\n");
	/* Scalars of an array stay on one line, the bracket closing a
	 * non-empty array on the next (jsonw_end); empty containers stay
	 * closed. */
	check("{\"a\": [1, 2, \"x\"], \"e\": {}, \"l\": [], \"n\": null}",
	      "{\n    \"a\": [1,2,\"x\"\n    ],\n    \"e\": {},\n    \"l\": [],\n    \"n\": null\n}\n");
	/* A string with brackets, a colon and escapes is copied untouched. */
	check("{\"rule\":\"a {b} [c]: \\\"d\\\\\"}", "{\n    \"rule\": \"a {b} [c]: \\\"d\\\\\"\n}\n");
	check("[]", "[]\n");
}

static void test_refused(void **state)
{
	(void)state;
	static const char *const bad[] = { "[", "{\"a\":1]", "]", "{\"a", "[[[" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out = NULL;
		assert_int_equal(vxctl_json_pretty(bad[i], strlen(bad[i]), &out), -EINVAL);
		assert_null(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
