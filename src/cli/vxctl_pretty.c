/* vxctl_pretty: iproute2's pretty JSON layout over compact JSON text (see
 * vxctl_pretty.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/vxctl_pretty.h"

enum { PRETTY_MAX_DEPTH = 64 };

struct pbuf {
	char *buf;
	size_t len, cap;
	int err;
};

static void put(struct pbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *bigger = realloc(b->buf, cap);
		if (!bigger) {
			b->err = -ENOMEM;
			return;
		}
		b->buf = bigger;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

/* json_writer's end of line: a newline, four spaces per open container. */
static void eol(struct pbuf *b, int depth)
{
	put(b, "\n", 1);
	for (int i = 0; i < depth; i++)
		put(b, "    ", 4);
}

/* The end of the string opening at in[i] (the index past its closing
 * quote), or 0 when it does not end. */
static size_t string_end(const char *in, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (in[i] == '\\')
			i++;
		else if (in[i] == '"')
			return i + 1;
	}
	return 0;
}

static size_t skip_blanks(const char *in, size_t len, size_t i)
{
	while (i < len && strchr(" \t\r\n", in[i]))
		i++;
	return i;
}

int vxctl_json_pretty(const char *in, size_t len, char **out)
{
	struct pbuf b = { 0 };
	char open[PRETTY_MAX_DEPTH];
	bool has[PRETTY_MAX_DEPTH + 1] = { false };
	int depth = 0, ret = 0;
	put(&b, "", 0);
	for (size_t i = skip_blanks(in, len, 0); i < len && !ret; i = skip_blanks(in, len, i)) {
		char c = in[i];
		if (c != '}' && c != ']')
			has[depth] = true;
		if (c == '{' || c == '[') {
			if (depth == PRETTY_MAX_DEPTH) {
				ret = -EINVAL;
				break;
			}
			open[depth++] = c;
			has[depth] = false;
			put(&b, &c, 1);
			i++;
			continue;
		}
		if (c == '}' || c == ']') {
			if (!depth || open[depth - 1] != (c == '}' ? '{' : '[')) {
				ret = -EINVAL;
				break;
			}
			bool items = has[depth--];
			if (items)
				eol(&b, depth);
			put(&b, &c, 1);
			i++;
		} else if (c == '"') {
			size_t end = string_end(in, len, i);
			if (!end) {
				ret = -EINVAL;
				break;
			}
			size_t next = skip_blanks(in, len, end);
			bool key = next < len && in[next] == ':';
			if (key)
				eol(&b, depth);
			put(&b, in + i, end - i);
			if (key)
				put(&b, ": ", 2);
			i = key ? next + 1 : end;
			if (key)
				continue;
		} else if (c == ',' || c == ':') {
			put(&b, &c, 1);
			i++;
			continue;
		} else {
			size_t end = i;
			while (end < len && !strchr(" \t\r\n,:[]{}\"", in[end]))
				end++;
			put(&b, in + i, end - i);
			i = end;
		}
		if (depth == 0)
			put(&b, "\n", 1);
	}
	if (!ret && depth)
		ret = -EINVAL;
	if (!ret)
		ret = b.err;
	if (ret) {
		free(b.buf);
		return ret;
	}
	*out = b.buf;
	return 0;
}
