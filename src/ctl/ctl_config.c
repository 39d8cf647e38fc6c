/* ctl_config: a config file is a list of vxctl commands (see ctl_config.h).
 * All lines are parsed into a private array first; *cfg is only filled when
 * every line is good, so a bad file changes nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/ctl_config.h"

static int __attribute__((format(printf, 4, 5)))
config_error(char *err, size_t err_size, int ret, const char *fmt, ...)
{
	if (err && err_size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* Room for one more command. */
static int grow(struct ctl_config *cfg, size_t *cap)
{
	if (cfg->n_cmds < *cap)
		return 0;
	size_t new_cap = *cap ? *cap * 2 : 16;
	struct ctl_cmd *cmds = realloc(cfg->cmds, new_cap * sizeof(*cmds));
	if (!cmds)
		return -ENOMEM;
	cfg->cmds = cmds;
	unsigned int *lines = realloc(cfg->lines, new_cap * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	cfg->lines = lines;
	*cap = new_cap;
	return 0;
}

static int parse_max(const char *name, const char *text, size_t len, size_t max, struct ctl_config *cfg,
		     char *err, size_t err_size)
{
	struct ctl_config out = { 0 };
	size_t cap = 0;
	unsigned int line_no = 0;
	int ret = 0;

	memset(cfg, 0, sizeof(*cfg));
	if (len > max)
		return config_error(err, err_size, -EFBIG, "%s: file larger than %zu bytes", name, max);

	for (size_t pos = 0; pos < len;) {
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - start) : len - pos;
		pos += line_len + (nl ? 1 : 0);
		line_no++;

		if (line_len >= CTL_CONFIG_MAX_LINE) {
			ret = config_error(err, err_size, -EINVAL,
					   "%s:%u: line longer than %d bytes", name, line_no,
					   CTL_CONFIG_MAX_LINE - 1);
			goto err_release;
		}
		char line[CTL_CONFIG_MAX_LINE];
		memcpy(line, start, line_len);
		line[line_len] = '\0';
		if (memchr(line, '\0', line_len)) {
			ret = config_error(err, err_size, -EINVAL, "%s:%u: NUL byte in line", name,
					   line_no);
			goto err_release;
		}

		char *words[CTL_MAX_WORDS];
		int n = ctl_split_words(line, words, CTL_MAX_WORDS);
		if (n == -E2BIG) {
			ret = config_error(err, err_size, -EINVAL,
					   "%s:%u: too many words, at most %d", name, line_no,
					   CTL_MAX_WORDS);
			goto err_release;
		}
		if (n == 0 || words[0][0] == '#')
			continue;

		ret = grow(&out, &cap);
		if (ret) {
			config_error(err, err_size, ret, "%s:%u: out of memory", name, line_no);
			goto err_release;
		}
		struct ctl_err perr;
		if (ctl_cmd_parse(n, (const char *const *)words, &out.cmds[out.n_cmds], &perr)) {
			ret = config_error(err, err_size, -EINVAL, "%s:%u: %s", name, line_no,
					   perr.msg);
			goto err_release;
		}
		if (out.cmds[out.n_cmds].verb == CTL_DATAPATH && out.n_cmds) {
			ret = config_error(err, err_size, -EINVAL,
					   "%s:%u: word 1 \"datapath\": must be the first line that is not a "
					   "comment (the datapath is chosen before any port exists; line %u comes first)",
					   name, line_no, out.lines[0]);
			goto err_release;
		}
		out.lines[out.n_cmds++] = line_no;
	}
	*cfg = out;
	return 0;

err_release:
	ctl_config_release(&out);
	return ret;
}

int ctl_config_parse(const char *name, const char *text, size_t len, struct ctl_config *cfg,
		     char *err, size_t err_size)
{
	return parse_max(name, text, len, CTL_CONFIG_MAX_SIZE, cfg, err, err_size);
}

int ctl_config_parse_batch(const char *name, const char *text, size_t len, struct ctl_config *cfg,
			   char *err, size_t err_size)
{
	int ret = parse_max(name, text, len, CTL_BATCH_MAX_SIZE, cfg, err, err_size);
	for (size_t i = 0; ret == 0 && i < cfg->n_cmds; i++) {
		const struct ctl_cmd *c = &cfg->cmds[i];
		if (c->verb == CTL_FILTER && ctl_flower_has_rule(&c->filter))
			continue;
		if (c->verb == CTL_FILTER && c->filter.verb == CTL_FILTER_DEL)
			continue;
		bool show = c->verb == CTL_FILTER;
		char word[32];
		snprintf(word, sizeof(word), "%s",
			 show ? ctl_flower_verb_name(c->filter.verb) : ctl_verb_name(c->verb));
		word[strcspn(word, " ")] = '\0'; /* "port add": its first word */
		ret = config_error(err, err_size, -EINVAL,
				   "%s:%u: word %d \"%s\": -batch takes filter add and filter del lines only",
				   name, cfg->lines[i], show ? 2 : 1, word);
		ctl_config_release(cfg);
	}
	return ret;
}

int ctl_config_load(const char *path, struct ctl_config *cfg, char *err, size_t err_size)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int fd, ret;

	memset(cfg, 0, sizeof(*cfg));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return config_error(err, err_size, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = config_error(err, err_size, -errno, "%s: %s", path, strerror(errno));
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = config_error(err, err_size, -EINVAL, "%s: not a regular file", path);
		goto err_close;
	}
	if (st.st_size > CTL_CONFIG_MAX_SIZE) {
		ret = config_error(err, err_size, -EFBIG, "%s: file larger than %d bytes", path,
				   CTL_CONFIG_MAX_SIZE);
		goto err_close;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		ret = config_error(err, err_size, -ENOMEM, "%s: out of memory", path);
		goto err_close;
	}
	/* Read to EOF, not to st_size: the file may change under us; the cap
	 * still holds. */
	for (;;) {
		if (len > (size_t)st.st_size) {
			ret = config_error(err, err_size, -EFBIG, "%s: file grew while read", path);
			goto err_free_text;
		}
		ssize_t n = read(fd, text + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = config_error(err, err_size, -errno, "%s: %s", path, strerror(errno));
			goto err_free_text;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ret = ctl_config_parse(path, text, len, cfg, err, err_size);

err_free_text:
	free(text);
err_close:
	close(fd);
	return ret;
}

void ctl_config_release(struct ctl_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->cmds);
	free(cfg->lines);
	memset(cfg, 0, sizeof(*cfg));
}
