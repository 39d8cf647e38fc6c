/* Unit tests for the `capture` grammar (src/ctl/ctl_cmd_capture.c): the
 * fields each key sets and their defaults, FILTER as the words left,
 * refusals naming the word, and parse -> format -> parse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl_parse_words.h"

static void parse_ok(const char *line, struct ctl_cmd *cmd)
{
	struct ctl_err err;
	if (parse_line(line, cmd, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
	assert_int_equal(cmd->verb, CTL_CAPTURE);
}

static void test_defaults(void **state)
{
	(void)state;
	struct ctl_cmd c;
	parse_ok("capture vnet0", &c);
	assert_string_equal(c.capture.port, "vnet0");
	assert_int_equal(c.capture.dirs, CTL_CAPTURE_BOTH);
	assert_false(c.capture.outer);
	assert_int_equal(c.capture.count, 0);
	assert_string_equal(c.capture.file, "");
	assert_string_equal(c.capture.filter, "");
	assert_int_equal(c.capture.given, 0);
}

static void test_keys_and_filter(void **state)
{
	(void)state;
	struct ctl_cmd c;
	parse_ok("capture vx99 -w /tmp/x.pcap outer in -c 10 udp port 9 and not icmp", &c);
	assert_string_equal(c.capture.port, "vx99");
	assert_int_equal(c.capture.dirs, CTL_CAPTURE_IN);
	assert_true(c.capture.outer);
	assert_int_equal(c.capture.count, 10);
	assert_string_equal(c.capture.file, "/tmp/x.pcap");
	assert_string_equal(c.capture.filter, "udp port 9 and not icmp");

	parse_ok("capture vnet0 out inner -w -", &c);
	assert_int_equal(c.capture.dirs, CTL_CAPTURE_OUT);
	assert_false(c.capture.outer);
	assert_string_equal(c.capture.file, "-");

	/* Keys after the first filter word belong to the filter (pcap judges it). */
	parse_ok("capture vnet0 icmp -c 3", &c);
	assert_string_equal(c.capture.filter, "icmp -c 3");
	assert_int_equal(c.capture.count, 0);

	/* A word holding blanks (one shell argument) is the same filter. */
	const char *argv[] = { "capture", "vnet0", "both", "icmp or arp" };
	struct ctl_err err;
	assert_int_equal(ctl_cmd_parse(4, argv, &c, &err), 0);
	assert_string_equal(c.capture.filter, "icmp or arp");
}

static const struct {
	const char *line;
	int word;
	const char *says;
} bad[] = {
	{ "capture", 2, "missing value after \"capture\", expected NAME" },
	{ "capture vnet0 in out", 4, "direction (in, out or both) given twice" },
	{ "capture vnet0 outer inner", 4, "layer (inner or outer) given twice" },
	{ "capture vnet0 -c", 4, "missing value after \"-c\", expected COUNT" },
	{ "capture vnet0 -c 0", 4, "\"-c\" out of range, expected 1..4294967295" },
	{ "capture vnet0 -c ten", 4, "bad number for \"-c\"" },
	{ "capture vnet0 -c 1 -c 2", 5, "\"-c\" given twice" },
	{ "capture vnet0 -w", 4, "missing value after \"-w\", expected FILE" },
	{ "capture vnet0 -w a -w b", 5, "\"-w\" given twice" },
	{ "capture a/b", 2, "bad name" },
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ctl_cmd c;
		struct ctl_err err;
		if (parse_line(bad[i].line, &c, &err) != -EINVAL)
			fail_msg("\"%s\": accepted", bad[i].line);
		if (err.word != bad[i].word || !strstr(err.msg, bad[i].says))
			fail_msg("\"%s\": got word %d \"%s\", want word %d containing \"%s\"",
				 bad[i].line, err.word, err.msg, bad[i].word, bad[i].says);
		assert_int_equal(c.verb, CTL_VERB_NONE);
	}
	/* control characters, and a filter over the limit */
	const char *ctrl[] = { "capture", "vnet0", "icmp\n" };
	struct ctl_cmd c;
	struct ctl_err err;
	assert_int_equal(ctl_cmd_parse(3, ctrl, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "control characters"));
	char big[CTL_CAPTURE_FILTER_SIZE + 1];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	const char *longf[] = { "capture", "vnet0", big };
	assert_int_equal(ctl_cmd_parse(3, longf, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "FILTER longer than"));
}

static const struct {
	const char *in, *canonical;
} round_trips[] = {
	{ "capture vnet0", NULL },
	{ "capture vnet0 both", NULL },
	{ "capture vx0 -c 5 outer out -w f.pcap tcp port 80",
	  "capture vx0 out outer -c 5 -w f.pcap tcp port 80" },
	{ "capture vx0 inner icmp", NULL },
};

static void test_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(round_trips) / sizeof(round_trips[0]); i++) {
		struct ctl_cmd a, b;
		char text[2048];
		parse_ok(round_trips[i].in, &a);
		assert_true(ctl_cmd_format(&a, text, sizeof(text)) > 0);
		assert_string_equal(text, round_trips[i].canonical ? round_trips[i].canonical : round_trips[i].in);
		parse_ok(text, &b);
		assert_true(ctl_cmd_equal(&a, &b));
	}
	assert_non_null(strstr(ctl_cmd_grammar(), "capture NAME"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_keys_and_filter),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
