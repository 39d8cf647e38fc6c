/* ctl_print: one printer for text and JSON (see ctl_print.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"

enum { CTL_PRINT_DEFAULT_MAX = 16 << 20 };

void ctl_print_init(struct ctl_print *p, bool json, size_t max_size)
{
	memset(p, 0, sizeof(*p));
	p->json = json;
	p->max_size = max_size ? max_size : CTL_PRINT_DEFAULT_MAX;
}

void ctl_print_release(struct ctl_print *p)
{
	if (!p)
		return;
	free(p->buf);
	p->buf = NULL;
	p->len = p->cap = 0;
}

bool ctl_print_is_json(const struct ctl_print *p)
{
	return p->json;
}

const char *ctl_print_data(const struct ctl_print *p)
{
	return p->buf ? p->buf : "";
}

size_t ctl_print_len(const struct ctl_print *p)
{
	return p->len;
}

static void set_error(struct ctl_print *p, int err)
{
	if (!p->err)
		p->err = err;
}

/* Make room for `more` bytes plus the NUL. */
static bool reserve(struct ctl_print *p, size_t more)
{
	if (p->err)
		return false;
	if (more > p->max_size || p->len + more > p->max_size) {
		set_error(p, -EMSGSIZE);
		return false;
	}
	size_t need = p->len + more + 1;
	if (need <= p->cap)
		return true;
	size_t cap = p->cap ? p->cap : 256;
	while (cap < need)
		cap *= 2;
	char *buf = realloc(p->buf, cap);
	if (!buf) {
		set_error(p, -ENOMEM);
		return false;
	}
	p->buf = buf;
	p->cap = cap;
	return true;
}

static void append(struct ctl_print *p, const char *s, size_t n)
{
	if (!reserve(p, n))
		return;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void append_str(struct ctl_print *p, const char *s)
{
	append(p, s, strlen(s));
}

static void vappendf(struct ctl_print *p, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		set_error(p, -EINVAL);
		return;
	}
	if (!reserve(p, (size_t)n))
		return;
	vsnprintf(p->buf + p->len, (size_t)n + 1, fmt, ap);
	p->len += (size_t)n;
}

static void __attribute__((format(printf, 2, 3))) appendf(struct ctl_print *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vappendf(p, fmt, ap);
	va_end(ap);
}

/* A JSON string, with the escapes RFC 8259 requires; bytes >= 0x80 pass
 * through (names are ASCII; anything else is the daemon's UTF-8). */
static void append_json_string(struct ctl_print *p, const char *s)
{
	append(p, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"': append(p, "\\\"", 2); break;
		case '\\': append(p, "\\\\", 2); break;
		case '\n': append(p, "\\n", 2); break;
		case '\r': append(p, "\\r", 2); break;
		case '\t': append(p, "\\t", 2); break;
		default:
			if (c < 0x20 || c == 0x7f)
				appendf(p, "\\u%04x", c);
			else
				append(p, (const char *)&c, 1);
		}
	}
	append(p, "\"", 1);
}

/* Start a JSON value: the comma, and the key if in an object.  Returns
 * false (and sets -EINVAL) for a value where none may go. */
static bool json_begin_value(struct ctl_print *p, const char *key)
{
	if (p->err)
		return false;
	if (p->depth == 0) {
		/* one top-level value; a keyed value at the top has no object */
		if (p->top_done || key) {
			set_error(p, -EINVAL);
			return false;
		}
		return true;
	}
	bool in_array = p->is_array[p->depth - 1];
	if (in_array != !key) {
		set_error(p, -EINVAL);
		return false;
	}
	if (p->has_items[p->depth - 1])
		append(p, ",", 1);
	p->has_items[p->depth - 1] = true;
	if (key) {
		append_json_string(p, key);
		append(p, ":", 1);
	}
	return true;
}

static void json_end_value(struct ctl_print *p)
{
	if (p->depth == 0)
		p->top_done = true;
}

static void open_container(struct ctl_print *p, const char *key, bool array)
{
	if (!p->json)
		return;
	if (p->depth == CTL_PRINT_MAX_DEPTH) {
		set_error(p, -EINVAL);
		return;
	}
	if (!json_begin_value(p, key))
		return;
	append(p, array ? "[" : "{", 1);
	p->is_array[p->depth] = array;
	p->has_items[p->depth] = false;
	p->depth++;
}

static void close_container(struct ctl_print *p, bool array)
{
	if (!p->json || p->err)
		return;
	if (p->depth == 0 || p->is_array[p->depth - 1] != array) {
		set_error(p, -EINVAL);
		return;
	}
	p->depth--;
	append(p, array ? "]" : "}", 1);
	json_end_value(p);
}

void ctl_print_open_object(struct ctl_print *p, const char *key)
{
	open_container(p, key, false);
}

void ctl_print_close_object(struct ctl_print *p)
{
	close_container(p, false);
}

void ctl_print_open_array(struct ctl_print *p, const char *key)
{
	open_container(p, key, true);
}

void ctl_print_close_array(struct ctl_print *p)
{
	close_container(p, true);
}

void ctl_print_consume(struct ctl_print *p)
{
	p->len = 0;
	if (p->buf)
		p->buf[0] = '\0';
}

int ctl_print_finish(struct ctl_print *p)
{
	if (p->json && !p->err) {
		while (p->depth > 0)
			close_container(p, p->is_array[p->depth - 1]);
		if (!p->top_done)
			append(p, "{}", 2);
		append(p, "\n", 1);
	}
	return p->err;
}

/* Which side of the mode a call prints on. */
static bool wants_text(const struct ctl_print *p, enum ctl_print_mode mode)
{
	return !p->json && mode != CTL_PRINT_JSON;
}

static bool wants_json(const struct ctl_print *p, enum ctl_print_mode mode)
{
	return p->json && mode != CTL_PRINT_TEXT;
}

/* A JSON scalar already rendered as text (number, true, null...). */
static void json_raw_value(struct ctl_print *p, const char *key, const char *raw)
{
	if (!json_begin_value(p, key))
		return;
	append_str(p, raw);
	json_end_value(p);
}

/* Text output with a caller's format of one conversion: the format comes
 * from our own code (never from input), as in iproute2's print_*. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
void ctl_print_uint(struct ctl_print *p, enum ctl_print_mode mode, const char *key,
		    const char *fmt, uint64_t value)
{
	if (wants_text(p, mode) && fmt) {
		appendf(p, fmt, value);
	} else if (wants_json(p, mode)) {
		char raw[24];
		snprintf(raw, sizeof(raw), "%" PRIu64, value);
		json_raw_value(p, key, raw);
	}
}

void ctl_print_int(struct ctl_print *p, enum ctl_print_mode mode, const char *key,
		   const char *fmt, int64_t value)
{
	if (wants_text(p, mode) && fmt) {
		appendf(p, fmt, value);
	} else if (wants_json(p, mode)) {
		char raw[24];
		snprintf(raw, sizeof(raw), "%" PRId64, value);
		json_raw_value(p, key, raw);
	}
}

void ctl_print_float(struct ctl_print *p, enum ctl_print_mode mode, const char *key,
		     const char *fmt, double value)
{
	if (wants_text(p, mode) && fmt) {
		appendf(p, fmt, value);
	} else if (wants_json(p, mode)) {
		char raw[40];
		if (isfinite(value))
			snprintf(raw, sizeof(raw), "%.17g", value);
		else
			snprintf(raw, sizeof(raw), "null");
		json_raw_value(p, key, raw);
	}
}

void ctl_print_string(struct ctl_print *p, enum ctl_print_mode mode, const char *key,
		      const char *fmt, const char *value)
{
	if (wants_text(p, mode) && fmt) {
		appendf(p, fmt, value ? value : "-");
	} else if (wants_json(p, mode)) {
		if (!value) {
			json_raw_value(p, key, "null");
			return;
		}
		if (!json_begin_value(p, key))
			return;
		append_json_string(p, value);
		json_end_value(p);
	}
}
#pragma GCC diagnostic pop

void ctl_print_bool(struct ctl_print *p, enum ctl_print_mode mode, const char *key,
		    const char *fmt, bool value)
{
	if (wants_text(p, mode))
		ctl_print_string(p, CTL_PRINT_TEXT, key, fmt, value ? "on" : "off");
	else if (wants_json(p, mode))
		json_raw_value(p, key, value ? "true" : "false");
}

void ctl_print_ip(struct ctl_print *p, enum ctl_print_mode mode, const char *key,
		  const char *fmt, const struct ctl_ip *ip)
{
	char text[INET6_ADDRSTRLEN];
	if (!inet_ntop(ip->family, ip->bytes, text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	ctl_print_string(p, mode, key, fmt, text);
}

void ctl_print_mac(struct ctl_print *p, enum ctl_print_mode mode, const char *key,
		   const char *fmt, const uint8_t mac[6])
{
	char text[18];
	snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	ctl_print_string(p, mode, key, fmt, text);
}

void ctl_print_text(struct ctl_print *p, const char *fmt, ...)
{
	if (p->json)
		return;
	va_list ap;
	va_start(ap, fmt);
	vappendf(p, fmt, ap);
	va_end(ap);
}

void ctl_print_nl(struct ctl_print *p)
{
	if (!p->json)
		append(p, "\n", 1);
}

void ctl_print_named_count(struct ctl_print *p, const char *name, uint64_t n)
{
	char fmt[80];
	snprintf(fmt, sizeof(fmt), " %s %%" PRIu64, name);
	ctl_print_uint(p, n ? CTL_PRINT_ANY : CTL_PRINT_JSON, name, fmt, n);
}

void ctl_print_named_counts(struct ctl_print *p, const char *key, const char *indent,
			    const char *const *names, const uint64_t *counts,
			    unsigned first, unsigned n)
{
	ctl_print_open_object(p, key);
	bool any = false;
	for (unsigned i = first; i < n; i++) {
		if (counts[i] && !any)
			ctl_print_text(p, "%s%s:", indent, key);
		any = any || counts[i];
		ctl_print_named_count(p, names[i], counts[i]);
	}
	if (any)
		ctl_print_nl(p);
	ctl_print_close_object(p);
}

void ctl_print_size_hist(struct ctl_print *p, const char *key, const char *label,
			 const char *const *names, const uint64_t *frames,
			 const uint64_t *bytes, unsigned n)
{
	bool any = false;
	for (unsigned b = 0; b < n; b++)
		any = any || frames[b];
	ctl_print_open_array(p, key);
	if (any)
		ctl_print_text(p, "%s", label);
	for (unsigned b = 0; b < n; b++) {
		ctl_print_open_object(p, NULL);
		ctl_print_string(p, CTL_PRINT_JSON, "bucket", "%s", names[b]);
		if (any) {
			ctl_print_string(p, CTL_PRINT_TEXT, NULL, " %s:", names[b]);
			ctl_print_uint(p, CTL_PRINT_TEXT, NULL, " %" PRIu64 " frames", frames[b]);
			ctl_print_uint(p, CTL_PRINT_TEXT, NULL, " %" PRIu64 " bytes", bytes[b]);
		}
		ctl_print_uint(p, CTL_PRINT_JSON, "frames", "%" PRIu64, frames[b]);
		ctl_print_uint(p, CTL_PRINT_JSON, "bytes", "%" PRIu64, bytes[b]);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
	if (any)
		ctl_print_nl(p);
}
