/* The findings list of diag.h: adding findings and their fields, cause
 * names, and diag_judge() itself. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/diag.h"

static const char *const diag_cause_names[DIAG_CAUSE_COUNT] = {
#define DIAG_CAUSE_NAME(e, name) [DIAG_##e] = name,
	DIAG_CAUSES(DIAG_CAUSE_NAME)
#undef DIAG_CAUSE_NAME
};

const char *diag_cause_name(enum diag_cause cause)
{
	return (unsigned)cause < DIAG_CAUSE_COUNT ? diag_cause_names[cause] : "invalid";
}

bool diag_cause_is_note(enum diag_cause cause)
{
	return cause >= DIAG_NOTE_CSUM_FINISHED;
}

unsigned diag_problems(const struct diag_report *r)
{
	unsigned n = 0;
	for (unsigned i = 0; i < r->n; i++)
		n += !diag_cause_is_note(r->f[i].cause);
	return n + r->left_out;
}

const struct diag_finding *diag_find(const struct diag_report *r, enum diag_cause cause)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->f[i].cause == cause)
			return &r->f[i];
	return NULL;
}

uint64_t diag_field_num(const struct diag_finding *f, const char *key)
{
	for (unsigned i = 0; f && i < f->n_fields; i++)
		if (!f->fields[i].is_str && strcmp(f->fields[i].key, key) == 0)
			return f->fields[i].num;
	return 0;
}

struct diag_finding *diag_add(struct diag_report *r, const struct diag_input *in, enum diag_cause cause,
			      const char *port, const char *fmt, ...)
{
	if (in->only && (!port || strcmp(port, in->only) != 0))
		return NULL;
	if (r->n == DIAG_MAX_FINDINGS) {
		r->left_out++;
		return NULL;
	}
	struct diag_finding *f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->cause = cause;
	snprintf(f->port, sizeof(f->port), "%s", port ? port : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
	return f;
}

static struct diag_field *diag_field(struct diag_finding *f, const char *key)
{
	if (!f || f->n_fields == DIAG_MAX_FIELDS)
		return NULL;
	struct diag_field *fl = &f->fields[f->n_fields++];
	memset(fl, 0, sizeof(*fl));
	fl->key = key;
	return fl;
}

void diag_num(struct diag_finding *f, const char *key, uint64_t value)
{
	struct diag_field *fl = diag_field(f, key);
	if (fl)
		fl->num = value;
}

void diag_str(struct diag_finding *f, const char *key, const char *value)
{
	struct diag_field *fl = diag_field(f, key);
	if (fl) {
		fl->is_str = true;
		snprintf(fl->str, sizeof(fl->str), "%s", value);
	}
}

const struct vxd_snapshot *diag_base(const struct diag_input *in, bool enough)
{
	static const struct vxd_snapshot zero;
	return enough && in->then ? in->then : &zero;
}

void diag_judge(const struct diag_input *in, struct diag_report *out)
{
	out->n = 0;
	out->left_out = 0;
	diag_judge_config(in, out);
	diag_judge_traffic(in, out);
}
