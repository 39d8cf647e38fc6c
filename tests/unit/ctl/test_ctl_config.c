/* Unit tests for src/ctl/ctl_config.c: comments and blank lines, line
 * numbers in errors and in the result, all-or-nothing parsing, limits, and
 * loading a real file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <cmocka.h>

#include "ctl/ctl_config.h"

static const char good[] =
	"# two hosts, VNI 99\n"
	"\n"
	"port add vx0 type vxlan vni 99 local 192.0.2.1 remote 192.0.2.2\n"
	"   # indented comment\n"
	"\t port add tap0 type tap vni 99 mtu 1450\r\n"
	"set gro on\n"
	"fdb add 02:00:00:00:00:01 vni 99 port tap0"; /* no final newline */

static void test_comments_blanks_and_line_numbers(void **state)
{
	(void)state;
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE] = "";
	assert_int_equal(ctl_config_parse("vx.conf", good, strlen(good), &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_cmds, 4);
	assert_int_equal(cfg.cmds[0].verb, CTL_PORT_ADD);
	assert_int_equal(cfg.cmds[0].port_add.type, CTL_PORT_VXLAN);
	assert_int_equal(cfg.lines[0], 3);
	assert_string_equal(cfg.cmds[1].port_add.name, "tap0");
	assert_int_equal(cfg.cmds[1].port_add.mtu, 1450);
	assert_int_equal(cfg.lines[1], 5);
	assert_int_equal(cfg.cmds[2].verb, CTL_SET);
	assert_int_equal(cfg.lines[2], 6);
	assert_int_equal(cfg.cmds[3].verb, CTL_FDB_ADD);
	assert_int_equal(cfg.lines[3], 7);
	ctl_config_release(&cfg);
	assert_int_equal(cfg.n_cmds, 0);
	assert_null(cfg.cmds);
	ctl_config_release(NULL);

	/* only comments: a valid, empty config */
	const char *empty = "# nothing\n\n   \n";
	assert_int_equal(ctl_config_parse("e", empty, strlen(empty), &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_cmds, 0);
	ctl_config_release(&cfg);
}

static void test_bad_line_is_named_and_nothing_returned(void **state)
{
	(void)state;
	const char *text =
		"port add tap0 type tap vni 1\n"
		"# fine so far\n"
		"port add vx0 type vxlan vni 99 local 192.0.2.1 remote 192.0.2.2 dstport 0\n"
		"port add tap1 type tap vni 1\n";
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	assert_int_equal(ctl_config_parse("/etc/vxswitch.conf", text, strlen(text), &cfg, err,
					  sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "/etc/vxswitch.conf:3: word 13 \"0\": \"dstport\" out of range, "
				 "expected 1..65535");
	assert_int_equal(cfg.n_cmds, 0);
	assert_null(cfg.cmds);

	/* a trailing comment is not a comment: only whole lines are */
	const char *trailing = "\nport show # all\n";
	assert_int_equal(ctl_config_parse("c", trailing, strlen(trailing), &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "c:2: word 3 \"#\": unexpected word, \"port show\" takes no more arguments");

	/* the last line, without a newline, is still numbered */
	const char *last = "version\nversion\nbogus";
	assert_int_equal(ctl_config_parse("c", last, strlen(last), &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "c:3: word 1 \"bogus\": unknown command"));
}

static void test_limits(void **state)
{
	(void)state;
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	char *text = malloc(CTL_CONFIG_MAX_LINE + 16);
	memset(text, ' ', CTL_CONFIG_MAX_LINE + 8);
	memcpy(text, "version", 7);
	text[CTL_CONFIG_MAX_LINE + 8] = '\n';
	assert_int_equal(ctl_config_parse("c", text, CTL_CONFIG_MAX_LINE + 9, &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "c:1: line longer than"));
	free(text);

	const char nul[] = "version\nver\0sion\n";
	assert_int_equal(ctl_config_parse("c", nul, sizeof(nul) - 1, &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "c:2: NUL byte in line");

	char many[1024] = "stats";
	for (int i = 0; i < CTL_MAX_WORDS; i++)
		strcat(many, " x");
	assert_int_equal(ctl_config_parse("c", many, strlen(many), &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "c:1: too many words"));

	assert_int_equal(ctl_config_parse("c", many, (size_t)CTL_CONFIG_MAX_SIZE + 1, &cfg, err,
					  sizeof(err)),
			 -EFBIG);
}

static void test_many_commands_grow(void **state)
{
	(void)state;
	size_t n = 1000;
	char *text = malloc(n * 32);
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "fdb flush vni %zu\n", i);
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	assert_int_equal(ctl_config_parse("c", text, len, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_cmds, n);
	assert_int_equal(cfg.cmds[999].fdb.vni, 999);
	assert_int_equal(cfg.lines[999], 1000);
	ctl_config_release(&cfg);
	free(text);
}

static void test_load_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test_ctl_config_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, good, strlen(good)), (ssize_t)strlen(good));
	close(fd);
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	assert_int_equal(ctl_config_load(path, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_cmds, 4);
	ctl_config_release(&cfg);

	fd = open(path, O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, "\nport del\n", 10), 10);
	close(fd);
	assert_int_equal(ctl_config_load(path, &cfg, err, sizeof(err)), -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "%s:8: word 3 (end of command): missing value after \"port del\"", path);
	assert_true(strncmp(err, want, strlen(want)) == 0);
	unlink(path);

	assert_int_equal(ctl_config_load(path, &cfg, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);
	assert_int_equal(ctl_config_load("/tmp", &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/tmp: not a regular file");
}

/* -batch files: filter add|del lines only, named by line and word. */
static void test_parse_batch(void **state)
{
	(void)state;
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	const char *ok = "# x\n\nfilter add dev v0 ingress pref 1 protocol ip flower action drop\n"
			 "  filter del dev v0 ingress pref 1\n";
	assert_int_equal(ctl_config_parse_batch("b", ok, strlen(ok), &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_cmds, 2);
	assert_int_equal(cfg.lines[0], 3);
	assert_int_equal(cfg.lines[1], 4);
	assert_int_equal(cfg.cmds[1].filter.verb, CTL_FILTER_DEL);
	ctl_config_release(&cfg);
	const char *show = "filter del dev v0 ingress\nfilter show dev v0 ingress\n";
	assert_int_equal(ctl_config_parse_batch("b", show, strlen(show), &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "b:2: word 2 \"show\": -batch takes filter add and filter del lines only");
	assert_int_equal(cfg.n_cmds, 0);
	const char *fdb = "filter del dev v0 ingress\n\nfdb flush\n";
	assert_int_equal(ctl_config_parse_batch("b", fdb, strlen(fdb), &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "b:3: word 1 \"fdb\": -batch takes filter add and filter del lines only");
	const char *bad = "filter del dev v0 ingress pref x\n";
	assert_int_equal(ctl_config_parse_batch("b", bad, strlen(bad), &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "b:1: word 7 \"x\""));
}

/* datapath kernel|user: parsed, formatted back, first command only. */
static void test_datapath_line(void **state)
{
	(void)state;
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE] = "";
	const char *ok = "# kernel\n\n  datapath kernel\nset gro off\n";
	assert_int_equal(ctl_config_parse("k", ok, strlen(ok), &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_cmds, 2);
	assert_int_equal(cfg.cmds[0].verb, CTL_DATAPATH);
	assert_true(cfg.cmds[0].datapath_kernel);
	assert_int_equal(cfg.lines[0], 3);
	char line[64];
	assert_true(ctl_cmd_format(&cfg.cmds[0], line, sizeof(line)) > 0);
	assert_string_equal(line, "datapath kernel");
	ctl_config_release(&cfg);
	const char *user = "datapath user\n";
	assert_int_equal(ctl_config_parse("u", user, strlen(user), &cfg, err, sizeof(err)), 0);
	assert_false(cfg.cmds[0].datapath_kernel);
	assert_true(ctl_cmd_format(&cfg.cmds[0], line, sizeof(line)) > 0);
	assert_string_equal(line, "datapath user");
	ctl_config_release(&cfg);

	const char *late = "# x\nset gro off\n\ndatapath kernel\n";
	assert_int_equal(ctl_config_parse("late", late, strlen(late), &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "late:4: word 1 \"datapath\": must be the first line"));
	assert_non_null(strstr(err, "line 2 comes first"));
	assert_int_equal(cfg.n_cmds, 0);
	const char *twice = "datapath user\ndatapath kernel\n";
	assert_int_equal(ctl_config_parse("t", twice, strlen(twice), &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t:2: word 1 \"datapath\""));
	const char *bad = "datapath fast\n";
	assert_int_equal(ctl_config_parse("b", bad, strlen(bad), &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "b:1: word 2 \"fast\": bad datapath, expected kernel or user");
	const char *extra = "datapath kernel now\n";
	assert_int_equal(ctl_config_parse("e", extra, strlen(extra), &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "e:1: word 3 \"now\""));
	const char *none = "datapath\n";
	assert_int_equal(ctl_config_parse("n", none, strlen(none), &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n:1: word 2 (end of command)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comments_blanks_and_line_numbers),
		cmocka_unit_test(test_bad_line_is_named_and_nothing_returned),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_many_commands_grow),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_parse_batch),
		cmocka_unit_test(test_datapath_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
