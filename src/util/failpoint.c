/* failpoint: see failpoint.h.  The armed points are a small array under one
 * mutex; a point whose failures are spent is removed, and the global flag
 * is kept equal to "the array is not empty" under the same mutex, so the
 * fast path goes quiet again as soon as the last armed point has fired. */
#include "util/failpoint.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct failpoint {
	char name[FAILPOINT_NAME_MAX + 1];
	unsigned skip;  /* hits still to pass */
	unsigned count; /* failures left after them; > 0 while in the array */
};

/* Starts true: the first call of failpoint_hit() must reach fp_init(). */
atomic_bool failpoint_maybe_armed_ = true;

static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fp_once = PTHREAD_ONCE_INIT;
static struct failpoint fp_points[FAILPOINT_MAX];
static unsigned fp_n;

static void fp_update_flag_locked(void)
{
	atomic_store_explicit(&failpoint_maybe_armed_, fp_n > 0, memory_order_relaxed);
}

static struct failpoint *fp_find_locked(const char *name, size_t len)
{
	for (unsigned i = 0; i < fp_n; i++)
		if (strlen(fp_points[i].name) == len && memcmp(fp_points[i].name, name, len) == 0)
			return &fp_points[i];
	return NULL;
}

static void fp_remove_locked(struct failpoint *fp)
{
	*fp = fp_points[--fp_n];
}

/* Arms the first `len` bytes of `name`.  -ENAMETOOLONG, -ENOSPC. */
static int fp_arm_locked(const char *name, size_t len, unsigned skip, unsigned count)
{
	if (len == 0 || len > FAILPOINT_NAME_MAX)
		return -ENAMETOOLONG;
	struct failpoint *fp = fp_find_locked(name, len);
	if (!fp) {
		if (count == 0)
			return 0;
		if (fp_n >= FAILPOINT_MAX)
			return -ENOSPC;
		fp = &fp_points[fp_n++];
		memcpy(fp->name, name, len);
		fp->name[len] = '\0';
	} else if (count == 0) {
		fp_remove_locked(fp);
		return 0;
	}
	fp->skip = skip;
	fp->count = count;
	return 0;
}

/* A decimal number up to `end`; false if empty, not digits or too big. */
static bool fp_parse_unsigned(const char *s, const char *end, unsigned *out)
{
	unsigned long v = 0;
	if (s == end)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 0xffffffffUL)
			return false;
	}
	*out = (unsigned)v;
	return true;
}

/* One "name:skip:count" entry, [s, end). */
static int fp_arm_entry_locked(const char *s, const char *end)
{
	const char *c1 = memchr(s, ':', (size_t)(end - s));
	const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
	unsigned skip, count;
	if (!c2 || !fp_parse_unsigned(c1 + 1, c2, &skip) || !fp_parse_unsigned(c2 + 1, end, &count))
		return -EINVAL;
	return fp_arm_locked(s, (size_t)(c1 - s), skip, count) ? -EINVAL : 0;
}

static int fp_arm_list_locked(const char *list, const char *origin)
{
	int ret = 0;
	const char *s = list;
	while (*s) {
		const char *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		if (end > s && fp_arm_entry_locked(s, end) < 0) {
			fprintf(stderr, "%s: bad failpoint '%.*s' (want name:skip:count), ignored\n",
				origin, (int)(end - s), s);
			ret = -EINVAL;
		}
		s = *end ? end + 1 : end;
	}
	fp_update_flag_locked();
	return ret;
}

static void fp_load_env(void)
{
	pthread_mutex_lock(&fp_lock);
	const char *env = getenv("VX_FAILPOINTS");
	if (env)
		(void)fp_arm_list_locked(env, "VX_FAILPOINTS");
	fp_update_flag_locked();
	pthread_mutex_unlock(&fp_lock);
}

static void fp_init(void)
{
	pthread_once(&fp_once, fp_load_env);
}

bool failpoint_hit_slow_(const char *name)
{
	bool hit = false;
	fp_init();
	pthread_mutex_lock(&fp_lock);
	struct failpoint *fp = fp_find_locked(name, strlen(name));
	if (fp && fp->skip > 0) {
		fp->skip--;
	} else if (fp) {
		hit = true;
		if (--fp->count == 0) {
			fp_remove_locked(fp);
			fp_update_flag_locked();
		}
	}
	pthread_mutex_unlock(&fp_lock);
	return hit;
}

void failpoint_arm(const char *name, unsigned skip, unsigned count)
{
	fp_init();
	pthread_mutex_lock(&fp_lock);
	int ret = fp_arm_locked(name, strlen(name), skip, count);
	fp_update_flag_locked();
	pthread_mutex_unlock(&fp_lock);
	if (ret < 0) {
		fprintf(stderr, "failpoint_arm(\"%s\"): %s\n", name,
			ret == -ENOSPC ? "more than FAILPOINT_MAX armed" : "bad name length");
		abort();
	}
}

int failpoint_arm_list(const char *list)
{
	fp_init();
	pthread_mutex_lock(&fp_lock);
	int ret = fp_arm_list_locked(list, "failpoint_arm_list");
	pthread_mutex_unlock(&fp_lock);
	return ret;
}

void failpoint_disarm_all(void)
{
	fp_init();
	pthread_mutex_lock(&fp_lock);
	fp_n = 0;
	fp_update_flag_locked();
	pthread_mutex_unlock(&fp_lock);
}
