/* Unit tests for src/ctl/ctl_print.c: the same calls give the expected text
 * and JSON that Python's json module accepts and reads back as intended. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"

/* Feed json to Python's parser and get back its canonical dump (sorted
 * keys, compact).  Returns python's exit status: non-zero = invalid JSON. */
static int python_json_canon(const char *json, char *out, size_t out_size)
{
	char in_path[] = "/tmp/test_ctl_print_XXXXXX";
	int fd = mkstemp(in_path);
	assert_true(fd >= 0);
	size_t len = strlen(json);
	assert_int_equal(write(fd, json, len), (ssize_t)len);
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys; "
		 "print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True, separators=(\",\",\":\")))' "
		 "%s 2>/dev/null", in_path);
	FILE *py = popen(cmd, "r");
	assert_non_null(py);
	size_t n = fread(out, 1, out_size - 1, py);
	out[n] = '\0';
	if (n && out[n - 1] == '\n')
		out[n - 1] = '\0';
	int status = pclose(py);
	unlink(in_path);
	return status;
}

/* A port listing as the daemon would print it. */
static void print_ports(struct ctl_print *p)
{
	struct ctl_ip remote = { .family = AF_INET };
	inet_pton(AF_INET, "192.0.2.2", &remote.v4);
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x0a };

	ctl_print_open_array(p, NULL);
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "%s:", "vx0");
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, 99);
	ctl_print_ip(p, CTL_PRINT_ANY, "remote", " remote %s", &remote);
	ctl_print_bool(p, CTL_PRINT_ANY, "udpcsum", " udpcsum %s", false);
	ctl_print_int(p, CTL_PRINT_ANY, "delta", " delta %" PRId64, -5);
	ctl_print_float(p, CTL_PRINT_ANY, "us_per_kb", " %.2f us/KB", 0.75);
	ctl_print_mac(p, CTL_PRINT_ANY, "mac", " mac %s", mac);
	ctl_print_uint(p, CTL_PRINT_JSON, "json_only", "should not show %" PRIu64, 1);
	ctl_print_text(p, " (text only %d)", 7);
	ctl_print_open_array(p, "sizes");
	ctl_print_uint(p, CTL_PRINT_ANY, NULL, " %" PRIu64, 1514);
	ctl_print_uint(p, CTL_PRINT_ANY, NULL, " %" PRIu64, 65226);
	ctl_print_close_array(p);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "%s:", "tap0");
	ctl_print_string(p, CTL_PRINT_ANY, "netns", " netns %s", NULL);
	ctl_print_nl(p);
	ctl_print_close_object(p);
	ctl_print_close_array(p);
}

static void test_text(void **state)
{
	(void)state;
	struct ctl_print p;
	ctl_print_init(&p, false, 0);
	assert_false(ctl_print_is_json(&p));
	assert_string_equal(ctl_print_data(&p), "");
	print_ports(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p),
			    "vx0: vni 99 remote 192.0.2.2 udpcsum off delta -5 0.75 us/KB"
			    " mac 02:00:00:00:00:0a (text only 7) 1514 65226\n"
			    "tap0: netns -\n");
	assert_int_equal(ctl_print_len(&p), strlen(ctl_print_data(&p)));
	ctl_print_release(&p);
	ctl_print_release(NULL);
}

static void test_json_is_valid_and_means_the_same(void **state)
{
	(void)state;
	struct ctl_print p;
	char canon[1024];
	ctl_print_init(&p, true, 0);
	assert_true(ctl_print_is_json(&p));
	print_ports(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	const char *out = ctl_print_data(&p);
	assert_int_equal(out[strlen(out) - 1], '\n');
	assert_int_equal(python_json_canon(out, canon, sizeof(canon)), 0);
	assert_string_equal(canon,
			    "[{\"delta\":-5,\"json_only\":1,\"mac\":\"02:00:00:00:00:0a\",\"name\":\"vx0\","
			    "\"remote\":\"192.0.2.2\",\"sizes\":[1514,65226],\"udpcsum\":false,"
			    "\"us_per_kb\":0.75,\"vni\":99},{\"name\":\"tap0\",\"netns\":null}]");
	ctl_print_release(&p);
}

static void test_json_escapes_and_special_values(void **state)
{
	(void)state;
	struct ctl_print p;
	char canon[512];
	ctl_print_init(&p, true, 0);
	ctl_print_open_object(&p, NULL);
	ctl_print_string(&p, CTL_PRINT_ANY, "we\"ird", NULL, "a\"b\\c\n\t\x01\x7f end");
	ctl_print_float(&p, CTL_PRINT_ANY, "nan", NULL, NAN);
	ctl_print_float(&p, CTL_PRINT_ANY, "inf", NULL, INFINITY);
	ctl_print_uint(&p, CTL_PRINT_ANY, "max", NULL, UINT64_MAX);
	ctl_print_int(&p, CTL_PRINT_ANY, "min", NULL, INT64_MIN);
	ctl_print_open_object(&p, "empty");
	ctl_print_close_object(&p);
	ctl_print_open_array(&p, "none");
	/* left open: finish closes it and the outer object */
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_int_equal(python_json_canon(ctl_print_data(&p), canon, sizeof(canon)), 0);
	assert_string_equal(canon,
			    "{\"empty\":{},\"inf\":null,\"max\":18446744073709551615,"
			    "\"min\":-9223372036854775808,\"nan\":null,\"none\":[],"
			    "\"we\\\"ird\":\"a\\\"b\\\\c\\n\\t\\u0001\\u007f end\"}");
	ctl_print_release(&p);
}

static void test_json_nothing_printed_is_empty_object(void **state)
{
	(void)state;
	struct ctl_print p;
	char canon[64];
	ctl_print_init(&p, true, 0);
	ctl_print_text(&p, "text only %s", "ignored");
	ctl_print_nl(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), "{}\n");
	assert_int_equal(python_json_canon(ctl_print_data(&p), canon, sizeof(canon)), 0);
	ctl_print_release(&p);
}

static void test_misuse_is_an_error_not_bad_json(void **state)
{
	(void)state;
	struct ctl_print p;

	ctl_print_init(&p, true, 0);
	ctl_print_uint(&p, CTL_PRINT_ANY, "key_at_top", NULL, 1);
	assert_int_equal(ctl_print_finish(&p), -EINVAL);
	ctl_print_release(&p);

	ctl_print_init(&p, true, 0);
	ctl_print_open_array(&p, NULL);
	ctl_print_uint(&p, CTL_PRINT_ANY, "key_in_array", NULL, 1);
	assert_int_equal(ctl_print_finish(&p), -EINVAL);
	ctl_print_release(&p);

	ctl_print_init(&p, true, 0);
	ctl_print_open_object(&p, NULL);
	ctl_print_uint(&p, CTL_PRINT_ANY, NULL, NULL, 1); /* no key in object */
	assert_int_equal(ctl_print_finish(&p), -EINVAL);
	ctl_print_release(&p);

	ctl_print_init(&p, true, 0);
	ctl_print_open_object(&p, NULL);
	ctl_print_close_array(&p);
	assert_int_equal(ctl_print_finish(&p), -EINVAL);
	ctl_print_release(&p);

	ctl_print_init(&p, true, 0);
	ctl_print_open_object(&p, NULL);
	ctl_print_close_object(&p);
	ctl_print_open_object(&p, NULL); /* a second top-level value */
	assert_int_equal(ctl_print_finish(&p), -EINVAL);
	ctl_print_release(&p);

	ctl_print_init(&p, true, 0);
	ctl_print_open_array(&p, NULL);
	for (int i = 0; i < CTL_PRINT_MAX_DEPTH; i++)
		ctl_print_open_array(&p, NULL);
	assert_int_equal(ctl_print_finish(&p), -EINVAL);
	ctl_print_release(&p);

	/* text mode ignores containers entirely */
	ctl_print_init(&p, false, 0);
	ctl_print_close_array(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	ctl_print_release(&p);
}

static void test_size_cap(void **state)
{
	(void)state;
	struct ctl_print p;
	ctl_print_init(&p, false, 100);
	for (int i = 0; i < 30; i++)
		ctl_print_text(&p, "%05d", i);
	assert_int_equal(ctl_print_finish(&p), -EMSGSIZE);
	assert_true(ctl_print_len(&p) <= 100);
	ctl_print_release(&p);

	/* growth well past the first allocation keeps every byte */
	ctl_print_init(&p, false, 0);
	for (int i = 0; i < 10000; i++)
		ctl_print_uint(&p, CTL_PRINT_ANY, NULL, "%" PRIu64 "\n", (uint64_t)i);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_non_null(strstr(ctl_print_data(&p), "\n9999\n"));
	assert_int_equal(ctl_print_len(&p), 10 * 2 + 90 * 3 + 900 * 4 + 9000 * 5);
	ctl_print_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json_is_valid_and_means_the_same),
		cmocka_unit_test(test_json_escapes_and_special_values),
		cmocka_unit_test(test_json_nothing_printed_is_empty_object),
		cmocka_unit_test(test_misuse_is_an_error_not_bad_json),
		cmocka_unit_test(test_size_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
