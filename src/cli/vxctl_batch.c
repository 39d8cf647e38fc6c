/* vxctl -batch: read and check the file (see vxctl_batch.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/vxctl_batch.h"
#include "ctl/ctl_config.h"
#include "ctl/ctl_proto.h"

/* All of f, up to one byte over the cap (so "too large" can be told). */
static int slurp(FILE *f, char **text, size_t *len)
{
	size_t cap = 64 << 10, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0 || n > CTL_BATCH_MAX_SIZE)
			break;
		if (n == cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	if (!buf)
		return -ENOMEM;
	if (ferror(f)) {
		free(buf);
		return -EIO;
	}
	*text = buf;
	*len = n;
	return 0;
}

int vxctl_batch_read(const char *file, char **text, size_t *len)
{
	const char *name = file; /* "-" in messages too, as tc's -batch - */
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		fprintf(stderr, "vxctl: -batch %s: %s\n", file, strerror(errno));
		return CTL_STATUS_REFUSED;
	}
	int ret = slurp(f, text, len);
	if (f != stdin)
		fclose(f);
	if (ret < 0) {
		fprintf(stderr, "vxctl: -batch %s: %s\n", name, strerror(-ret));
		return CTL_STATUS_REFUSED;
	}
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	ret = ctl_config_parse_batch(name, *text, *len, &cfg, err, sizeof(err));
	ctl_config_release(&cfg);
	if (ret < 0) {
		fprintf(stderr, "vxctl: %s\n", err);
		free(*text);
		*text = NULL;
		return CTL_STATUS_REFUSED;
	}
	return 0;
}

/* One line of a -force batch; its CTL_STATUS (OK for a blank or comment line). */
static int force_line(char *line, const char *name, unsigned int line_no,
		      int (*run)(void *ctx, int n, const char *const *words), void *ctx)
{
	char *words[CTL_MAX_WORDS];
	int n = ctl_split_words(line, words, CTL_MAX_WORDS);
	if (n == 0 || (n > 0 && words[0][0] == '#'))
		return CTL_STATUS_OK;
	int status;
	if (n < 0) {
		fprintf(stderr, "vxctl: %s:%u: too many words, at most %d\n", name, line_no,
			CTL_MAX_WORDS);
		status = CTL_STATUS_REFUSED;
	} else {
		status = run(ctx, n, (const char *const *)words);
	}
	if (status != CTL_STATUS_OK)
		fprintf(stderr, "Command failed %s:%u\n", name, line_no);
	return status;
}

int vxctl_batch_force(const char *file,
		      int (*run)(void *ctx, int n, const char *const *words), void *ctx)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		fprintf(stderr, "vxctl: -batch %s: %s\n", file, strerror(errno));
		return CTL_STATUS_REFUSED;
	}
	char *line = NULL;
	size_t cap = 0;
	unsigned int line_no = 0;
	int result = CTL_STATUS_OK;
	while (getline(&line, &cap, f) >= 0) {
		int status = force_line(line, file, ++line_no, run, ctx);
		if (status == CTL_STATUS_UNREACHABLE) {
			result = status;
			break;
		}
		if (status != CTL_STATUS_OK)
			result = CTL_STATUS_REFUSED;
	}
	if (ferror(f)) {
		fprintf(stderr, "vxctl: -batch %s: %s\n", file, strerror(errno));
		result = CTL_STATUS_REFUSED;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return result;
}
