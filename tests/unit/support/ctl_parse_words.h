/* For the grammar tests: split a copy of a line into words as the config
 * reader does and parse it (include after <cmocka.h>). */
#ifndef VX_TEST_CTL_PARSE_WORDS_H
#define VX_TEST_CTL_PARSE_WORDS_H

#include <stdio.h>

#include "ctl/ctl_cmd.h"

static inline int parse_line(const char *line, struct ctl_cmd *cmd, struct ctl_err *err)
{
	char copy[2048];
	char *words[CTL_MAX_WORDS + 8];
	snprintf(copy, sizeof(copy), "%s", line);
	int n = ctl_split_words(copy, words, CTL_MAX_WORDS + 8);
	assert_true(n >= 0);
	return ctl_cmd_parse(n, (const char *const *)words, cmd, err);
}

#endif
