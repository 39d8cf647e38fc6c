/* Helpers of the flower tests: tables from rule lines, keys from real
 * frames.  Test code only (header-only: each test binary links alone). */
#ifndef VX_TESTS_FLOWER_TEST_UTIL_H
#define VX_TESTS_FLOWER_TEST_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_flower.h"
#include "switch/flower_table.h"

/* Ports the tests know: vnet0 = 1, vnet1 = 2, vxlan0 = 3, tap1 = 4. */
static const char *const test_port_names[] = { "", "vnet0", "vnet1", "vxlan0", "tap1" };

static inline int test_resolve(void *aux, const char *name, uint16_t *id)
{
	(void)aux;
	for (uint16_t i = 1; i < sizeof(test_port_names) / sizeof(test_port_names[0]); i++) {
		if (!strcmp(name, test_port_names[i])) {
			*id = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* Parses `line` (a filter add/del) into *f; fails the test if refused. */
static inline void test_parse_rule(const char *line, struct ctl_flower *f)
{
	char copy[1024];
	char *words[CTL_MAX_WORDS + 1];
	struct ctl_err err;
	snprintf(copy, sizeof(copy), "%s", line);
	int n = ctl_split_words(copy, words, CTL_MAX_WORDS + 1);
	assert_true(n > 0);
	if (ctl_flower_parse(n, (const char *const *)words, f, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
}

/* The `filter add` line of a rule as the table keeps it (ctl_flower_format()). */
static inline int test_format_rule(const struct flower_spec *spec, char *buf, size_t size)
{
	const struct ctl_flower add = { .verb = CTL_FILTER_ADD, .rule = *spec };
	return ctl_flower_format(&add, buf, size);
}

/* old + the parsed commands as one batch: flower_table_apply(). */
static inline int test_apply_cmds(const struct flower_table *old, const struct ctl_flower *cmds, size_t n,
				  uint64_t now_ns, struct flower_table **out, struct flower_error *err)
{
	struct flower_op *ops = calloc(n + 1, sizeof(*ops));
	assert_non_null(ops);
	ctl_flower_ops(cmds, n, ops);
	int ret = flower_table_apply(old, ops, n, test_resolve, NULL, now_ns, out, err);
	free(ops);
	return ret;
}

/* old + the lines as one batch; returns what flower_table_apply() did. */
static inline int test_apply(const struct flower_table *old, const char *const *lines, size_t n,
		      struct flower_table **out, struct flower_error *err)
{
	static struct ctl_flower ops[64];
	assert_true(n <= 64);
	for (size_t i = 0; i < n; i++)
		test_parse_rule(lines[i], &ops[i]);
	return test_apply_cmds(old, ops, n, 1000, out, err);
}

/* A table of the lines, which must all be accepted. */
static inline struct flower_table *test_table(const struct flower_table *old, const char *const *lines,
				       size_t n)
{
	struct flower_table *t = NULL;
	struct flower_error err;
	int ret = test_apply(old, lines, n, &t, &err);
	if (ret)
		fail_msg("batch refused at %zu: %s", err.op, err.msg);
	return t;
}

#define TABLE(...)                                                                 \
	({                                                                         \
		static const char *const lines_[] = { __VA_ARGS__ };               \
		test_table(NULL, lines_, sizeof(lines_) / sizeof(lines_[0]));      \
	})

#endif
