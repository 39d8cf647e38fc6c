/* ctl_print: one printer for text and JSON output, like iproute2's
 * json_print.c.
 *
 * The caller writes each value once:
 *
 *	ctl_print_open_object(p, NULL);
 *	ctl_print_string(p, CTL_PRINT_ANY, "name", "port %s", name);
 *	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " vni %" PRIu64, vni);
 *	ctl_print_nl(p);
 *	ctl_print_close_object(p);
 *
 * In text mode the key is ignored and fmt (a printf format with exactly one
 * conversion, of the type the function takes: "%" PRIu64 for uint, "%" PRId64
 * for int, %f/%g for float, %s for the rest; NULL prints nothing) is used; in JSON mode fmt is
 * ignored and "key": value is emitted (key must be NULL inside an array,
 * non-NULL inside an object).  CTL_PRINT_TEXT / CTL_PRINT_JSON restrict a
 * call to one mode.  Objects/arrays are no-ops in text mode.
 *
 * Output accumulates in a growable buffer.  Allocation failure is sticky:
 * later calls do nothing and ctl_print_finish() reports -ENOMEM.  Misuse
 * (closing what is not open, nesting deeper than CTL_PRINT_MAX_DEPTH) is
 * sticky -EINVAL, so a buggy printer gives an error, never invalid JSON. */
#ifndef VX_CTL_CTL_PRINT_H
#define VX_CTL_CTL_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctl_ip;

enum ctl_print_mode {
	CTL_PRINT_ANY = 0,
	CTL_PRINT_TEXT,
	CTL_PRINT_JSON,
};

enum { CTL_PRINT_MAX_DEPTH = 16 };

struct ctl_print {
	char *buf;
	size_t len, cap;
	size_t max_size;  /* output cap; exceeding it is -EMSGSIZE */
	bool json;
	int err;          /* sticky: 0, -ENOMEM, -EINVAL, -EMSGSIZE */
	int depth;        /* open JSON containers */
	bool is_array[CTL_PRINT_MAX_DEPTH];
	bool has_items[CTL_PRINT_MAX_DEPTH];
	bool top_done;    /* a complete top-level JSON value was written */
};

/* max_size 0 means the default (16 MiB). */
void ctl_print_init(struct ctl_print *p, bool json, size_t max_size);
/* Frees the buffer; the printer may be initialised again. NULL is a no-op. */
void ctl_print_release(struct ctl_print *p);
/* Forgets the output so far (the caller has sent it on: a streamed reply)
 * and keeps the state: open containers, commas, the sticky error. */
void ctl_print_consume(struct ctl_print *p);
/* Closes any container still open; in JSON mode writes "{}" if nothing was
 * printed, and a final newline.  Returns 0 or the sticky error. */
int ctl_print_finish(struct ctl_print *p);

bool ctl_print_is_json(const struct ctl_print *p);
/* NUL-terminated output so far ("" when empty). */
const char *ctl_print_data(const struct ctl_print *p);
size_t ctl_print_len(const struct ctl_print *p);

void ctl_print_open_object(struct ctl_print *p, const char *key);
void ctl_print_close_object(struct ctl_print *p);
void ctl_print_open_array(struct ctl_print *p, const char *key);
void ctl_print_close_array(struct ctl_print *p);

void ctl_print_uint(struct ctl_print *p, enum ctl_print_mode mode,
		    const char *key, const char *fmt, uint64_t value);
void ctl_print_int(struct ctl_print *p, enum ctl_print_mode mode,
		   const char *key, const char *fmt, int64_t value);
/* JSON: NaN and infinities print as null. */
void ctl_print_float(struct ctl_print *p, enum ctl_print_mode mode,
		     const char *key, const char *fmt, double value);
/* value NULL prints as JSON null, and as "-" in text. */
void ctl_print_string(struct ctl_print *p, enum ctl_print_mode mode,
		      const char *key, const char *fmt, const char *value);
/* JSON true/false; text: fmt gets "on" or "off" for its %s. */
void ctl_print_bool(struct ctl_print *p, enum ctl_print_mode mode,
		    const char *key, const char *fmt, bool value);
/* Address as inet_ntop prints it; fmt takes %s. */
void ctl_print_ip(struct ctl_print *p, enum ctl_print_mode mode,
		  const char *key, const char *fmt, const struct ctl_ip *ip);
/* aa:bb:cc:dd:ee:ff; fmt takes %s. */
void ctl_print_mac(struct ctl_print *p, enum ctl_print_mode mode,
		   const char *key, const char *fmt, const uint8_t mac[6]);

/* Text mode only: printf-style free text ("\n" to end a line). */
void ctl_print_text(struct ctl_print *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Text mode only: a newline. */
void ctl_print_nl(struct ctl_print *p);

/* Sets of counters, printed alike by both datapaths' `stats`. */

/* One counter of a named set (drop reasons, flush reasons): " NAME N" in
 * text when N is not 0; "NAME": N in JSON always. */
void ctl_print_named_count(struct ctl_print *p, const char *name, uint64_t n);
/* The counters COUNTS[FIRST..N) named NAMES[i], as an object KEY: in text
 * one line "INDENTKEY:" and the non-zero ones (no line when all are 0);
 * in JSON every one, zeros too. */
void ctl_print_named_counts(struct ctl_print *p, const char *key, const char *indent,
			    const char *const *names, const uint64_t *counts,
			    unsigned first, unsigned n);
/* A size histogram of N buckets as an array KEY of {"bucket": NAMES[b],
 * "frames", "bytes"}; in text one line "LABEL NAME: F frames B bytes ...",
 * none when no bucket has a frame. */
void ctl_print_size_hist(struct ctl_print *p, const char *key, const char *label,
			 const char *const *names, const uint64_t *frames,
			 const uint64_t *bytes, unsigned n);

#endif /* VX_CTL_CTL_PRINT_H */
