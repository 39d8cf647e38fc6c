#include "control/privs.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(PRIVS_KEPT_CAPS == ((1ull << CAP_NET_ADMIN) | (1ull << CAP_SYS_ADMIN)),
	       "PRIVS_KEPT_CAPS is CAP_NET_ADMIN and CAP_SYS_ADMIN");

/* The errno, with one line saying what failed. */
static int fail(char err[PRIVS_ERR_LEN], const char *what)
{
	int e = errno ? errno : EPERM;
	snprintf(err, PRIVS_ERR_LEN, "%s: %s", what, strerror(e));
	return -e;
}

static bool parse_id(const char *s, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v >= (unsigned long)(uid_t)-1)
		return false;
	*out = v;
	return true;
}

static int lookup_user(struct privs *p, const char *user, char err[PRIVS_ERR_LEN])
{
	unsigned long id;
	errno = 0;
	struct passwd *pw = getpwnam(user);
	if (!pw && parse_id(user, &id))
		pw = getpwuid((uid_t)id);
	if (!pw) {
		snprintf(err, PRIVS_ERR_LEN, "--user %s: no such user", user);
		return -ENOENT;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, PRIVS_ERR_LEN, "--user %s: that is root, nothing would be dropped", user);
		return -EINVAL;
	}
	p->set_user = true;
	p->uid = pw->pw_uid;
	p->gid = pw->pw_gid;
	return 0;
}

int privs_lookup(struct privs *p, const char *user, const char *group, char err[PRIVS_ERR_LEN])
{
	*p = (struct privs){ 0 };
	if (user) {
		int ret = lookup_user(p, user, err);
		if (ret < 0)
			return ret;
	}
	if (group) {
		unsigned long id;
		struct group *gr = getgrnam(group);
		if (gr)
			p->gid = gr->gr_gid;
		else if (parse_id(group, &id))
			p->gid = (gid_t)id;
		else {
			snprintf(err, PRIVS_ERR_LEN, "--group %s: no such group", group);
			return -ENOENT;
		}
		p->set_group = true;
	}
	return 0;
}

int privs_prepare(const struct privs *p, char err[PRIVS_ERR_LEN])
{
	if (!p->set_user)
		return 0;
	errno = 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(err, "prctl(PR_SET_NO_NEW_PRIVS)");
	/* Every capability the kernel knows: PR_CAPBSET_READ says EINVAL past
	 * the last one. */
	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
		if (cap < 64 && (PRIVS_KEPT_CAPS & (1ull << cap)))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return fail(err, "prctl(PR_CAPBSET_DROP) (--user needs root)");
	}
	return 0;
}

/* This thread's capabilities become PRIVS_KEPT_CAPS, permitted and
 * effective; inheritable and ambient empty. */
static int set_caps(char err[PRIVS_ERR_LEN])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
	data[0].permitted = data[0].effective = (uint32_t)PRIVS_KEPT_CAPS;
	data[1].permitted = data[1].effective = (uint32_t)(PRIVS_KEPT_CAPS >> 32);
	errno = 0;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return fail(err, "capset");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return fail(err, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
	return 0;
}

static int switch_user(const struct privs *p, char err[PRIVS_ERR_LEN])
{
	errno = 0;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return fail(err, "prctl(PR_SET_KEEPCAPS)");
	if (setgroups(0, NULL) < 0)
		return fail(err, "setgroups");
	if (setresgid(p->gid, p->gid, p->gid) < 0)
		return fail(err, "setresgid");
	if (setresuid(p->uid, p->uid, p->uid) < 0)
		return fail(err, "setresuid");
	int ret = set_caps(err);
	if (ret < 0)
		return ret;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return fail(err, "prctl(PR_SET_KEEPCAPS, 0)");
	/* Paranoia: root must be out of reach now. */
	if (setuid(0) == 0 || geteuid() != p->uid || getegid() != p->gid) {
		snprintf(err, PRIVS_ERR_LEN, "still able to become root after the switch");
		return -EPERM;
	}
	return 0;
}

int privs_drop(const struct privs *p, char err[PRIVS_ERR_LEN])
{
	if (p->set_user)
		return switch_user(p, err);
	errno = 0;
	if (p->set_group && setresgid(p->gid, p->gid, p->gid) < 0)
		return fail(err, "setresgid to --group");
	return 0;
}
