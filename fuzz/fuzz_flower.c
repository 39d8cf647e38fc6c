/* Fuzz the filter grammar: bytes -> words -> ctl_flower_parse.  Every
 * refusal names a word within the command or just after it in one line;
 * every accepted command formats, and the formatted text parses back to the
 * same struct (the round trip `filter show` relies on).  Accepted adds are
 * also compiled into a table and one key run through it, so the rule model
 * and the classifier see every shape of rule the grammar lets through. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_flower.h"
#include "switch/flower_table.h"

static int resolve(void *aux, const char *name, uint16_t *id)
{
	(void)aux;
	if (!strcmp(name, "missing"))
		return -ENOENT;
	*id = (uint16_t)(1 + (name[0] & 7)); /* any other name is a port */
	return 0;
}

static void run_table(const struct ctl_flower *f)
{
	struct flower_table *t = NULL;
	struct flower_error err;
	struct flower_op op;
	ctl_flower_ops(f, 1, &op);
	if (flower_table_apply(NULL, &op, 1, resolve, NULL, 0, &t, &err))
		return;
	struct flow_key key;
	memset(&key, 0, sizeof(key));
	key.in_port = flower_table_rule(t, 0)->port;
	key.dl_type = f->rule.match.protocol;
	struct flower_verdict v;
	flower_table_classify(t, &key, &v);
	/* a frame enters chain 0 only; other chains are reached by goto */
	bool want = f->rule.chain == 0 && cls_match_matches(&flower_table_rule(t, 0)->match, &key);
	if (want != (v.n_rules > 0))
		abort();
	flower_table_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	char *words[CTL_MAX_WORDS + 1];
	struct ctl_flower f, again;
	struct ctl_err err;
	int n = ctl_split_words(line, words, CTL_MAX_WORDS + 1);
	if (n < 0)
		goto out;
	if (ctl_flower_parse(n, (const char *const *)words, &f, &err)) {
		if (err.word < 1 || err.word > n + 1 || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		goto out;
	}
	char text[4096];
	int len = ctl_flower_format(&f, text, sizeof(text));
	if (len < 0 || (size_t)len != strlen(text))
		abort();
	n = ctl_split_words(text, words, CTL_MAX_WORDS + 1);
	if (n < 0 || ctl_flower_parse(n, (const char *const *)words, &again, NULL))
		abort();
	if (!ctl_flower_equal(&f, &again))
		abort();
	if (f.verb == CTL_FILTER_ADD)
		run_table(&f);
out:
	free(line);
	return 0;
}
