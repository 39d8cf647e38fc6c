/* Unit tests for vxctl's global options (src/cli/vxctl_opts.c): tc's
 * spellings and prefixes in tc's order, the socket's long option and
 * environment variable, the old `-s PATH` refused with the line to type,
 * the options vxctl cannot honour refused with their reason, and -s put
 * into filter show. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cli/vxctl_opts.h"
#include "ctl/ctl_cmd.h"
#include "ctl/ctl_proto.h"

static char err[VXCTL_OPTS_ERR_SIZE];

/* line: the whole command line, "vxctl" first; env: $VXCTL_SOCKET. */
static int parse(const char *line, const char *env, struct vxctl_opts *o)
{
	static char copy[512];
	static char *words[64];
	snprintf(copy, sizeof(copy), "%s", line);
	int n = ctl_split_words(copy, words, 64);
	assert_true(n > 0);
	err[0] = '\0';
	return vxctl_opts_parse(n, (const char *const *)words, env, o, err, sizeof(err));
}

static void refused(const char *line, const char *needle)
{
	struct vxctl_opts o;
	assert_int_equal(parse(line, NULL, &o), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("\"%s\": \"%s\" lacks \"%s\"", line, err, needle);
}

static void test_tc_spellings(void **state)
{
	(void)state;
	struct vxctl_opts o;
	static const char *const stats[] = { "-s", "-st", "-stats", "-stat", "-statistics",
					     "--stats" };
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "vxctl %s filter show dev vnet0 ingress", stats[i]);
		assert_int_equal(parse(line, NULL, &o), 0);
		assert_int_equal(o.stats, 1);
		assert_int_equal(o.first, 2);
	}
	assert_int_equal(parse("vxctl -s -s -j -p filter show dev v ingress", NULL, &o), 0);
	assert_int_equal(o.stats, 2);
	assert_true(o.json && o.pretty);
	assert_int_equal(o.first, 5);
	assert_int_equal(parse("vxctl -json -pretty version", NULL, &o), 0);
	assert_true(o.json && o.pretty);
	/* -b is -batch (tried before -brief), -f is -force. */
	assert_int_equal(parse("vxctl -f -b rules.txt", NULL, &o), 0);
	assert_string_equal(o.batch, "rules.txt");
	assert_true(o.force);
	assert_int_equal(parse("vxctl -force -batch -", NULL, &o), 0);
	assert_string_equal(o.batch, "-");
	assert_int_equal(parse("vxctl -h", NULL, &o), 0);
	assert_true(o.help);
	assert_int_equal(parse("vxctl --help", NULL, &o), 0);
	assert_true(o.help);
	/* Options end at the first word: a -s after it is the command's. */
	assert_int_equal(parse("vxctl filter show -s dev v ingress", NULL, &o), 0);
	assert_int_equal(o.stats, 0);
	assert_int_equal(o.first, 1);
}

static void test_socket(void **state)
{
	(void)state;
	struct vxctl_opts o;
	assert_int_equal(parse("vxctl version", NULL, &o), 0);
	assert_string_equal(o.socket, CTL_DEFAULT_SOCKET);
	assert_int_equal(parse("vxctl version", "", &o), 0);
	assert_string_equal(o.socket, CTL_DEFAULT_SOCKET);
	assert_int_equal(parse("vxctl version", "/tmp/env.sock", &o), 0);
	assert_string_equal(o.socket, "/tmp/env.sock");
	/* The option wins over the environment, in every spelling. */
	assert_int_equal(parse("vxctl --socket /tmp/a.sock version", "/tmp/env.sock", &o), 0);
	assert_string_equal(o.socket, "/tmp/a.sock");
	assert_int_equal(parse("vxctl -socket /tmp/b.sock version", NULL, &o), 0);
	assert_string_equal(o.socket, "/tmp/b.sock");
	assert_int_equal(parse("vxctl --socket=/tmp/c.sock -s filter show dev v ingress", NULL, &o), 0);
	assert_string_equal(o.socket, "/tmp/c.sock");
	assert_int_equal(o.stats, 1);
	refused("vxctl --socket", "needs a value");
	refused("vxctl --socket= version", "empty path");
}

static void test_refused(void **state)
{
	(void)state;
	/* The old form names what to type instead. */
	refused("vxctl -s /run/x.sock port show", "--socket /run/x.sock");
	refused("vxctl -s h1.sock port show", "VXCTL_SOCKET=h1.sock");
	refused("vxctl -d filter show dev v ingress", "-details");
	refused("vxctl -details filter show dev v ingress", "no more detail");
	refused("vxctl -n vm1 port show", "no network namespace");
	refused("vxctl -netns vm1 port show", "--socket PATH");
	refused("vxctl -p version", "give -json too");
	refused("vxctl -f version", "give -batch too");
	refused("vxctl -x version", "option \"-x\" is unknown");
	refused("vxctl -json=1 version", "takes no value");
	refused("vxctl -batch", "needs a value");
}

static void test_apply(void **state)
{
	(void)state;
	struct vxctl_opts o = { .stats = 1 };
	const char *in[] = { "filter", "show", "dev", "vnet0", "ingress" };
	const char *out[16];
	assert_int_equal(vxctl_opts_apply(&o, false, 5, in, out, err, sizeof(err)), 6);
	assert_string_equal(out[1], "show");
	assert_string_equal(out[2], "-s");
	assert_string_equal(out[3], "dev");
	assert_string_equal(out[5], "ingress");
	/* get too, in tc's short spellings */
	const char *get[] = { "filter", "g", "dev", "v", "ingress", "pref", "1", "handle", "1" };
	assert_int_equal(vxctl_opts_apply(&o, false, 9, get, out, err, sizeof(err)), 10);
	assert_string_equal(out[2], "-s");
	const char *lst[] = { "filter", "lst", "dev", "v", "ingress" };
	assert_int_equal(vxctl_opts_apply(&o, false, 5, lst, out, err, sizeof(err)), 6);
	/* The word the grammar already has is not doubled. */
	const char *in2[] = { "filter", "ls", "-s", "dev", "v", "ingress" };
	assert_int_equal(vxctl_opts_apply(&o, false, 6, in2, out, err, sizeof(err)), 6);
	/* Other commands have no counters to add: refused, but not in a batch. */
	const char *add[] = { "filter", "add", "dev", "v", "ingress" };
	assert_int_equal(vxctl_opts_apply(&o, false, 5, add, out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "vxctl stats"));
	assert_int_equal(vxctl_opts_apply(&o, true, 5, add, out, err, sizeof(err)), 5);
	assert_string_equal(out[1], "add");
	/* Without -s nothing changes. */
	o.stats = 0;
	assert_int_equal(vxctl_opts_apply(&o, false, 5, in, out, err, sizeof(err)), 5);
	assert_string_equal(out[2], "dev");
	/* -br: tc's terse dump, after -s, for filter show only */
	o.brief = true;
	assert_int_equal(vxctl_opts_apply(&o, false, 5, in, out, err, sizeof(err)), 6);
	assert_string_equal(out[2], "-br");
	assert_string_equal(out[3], "dev");
	o.stats = 2;
	assert_int_equal(vxctl_opts_apply(&o, false, 5, in, out, err, sizeof(err)), 7);
	assert_string_equal(out[2], "-s");
	assert_string_equal(out[3], "-br");
	assert_string_equal(out[4], "dev");
	assert_int_equal(vxctl_opts_apply(&o, false, 6, in2, out, err, sizeof(err)), 7);
	assert_string_equal(out[3], "-br");
	assert_int_equal(vxctl_opts_apply(&o, false, 9, get, out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "terse"));
	o.stats = 0;
	const char *ver[] = { "version" };
	assert_int_equal(vxctl_opts_apply(&o, false, 1, ver, out, err, sizeof(err)), -EINVAL);
	assert_int_equal(vxctl_opts_apply(&o, true, 1, ver, out, err, sizeof(err)), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tc_spellings),
		cmocka_unit_test(test_socket),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_apply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
