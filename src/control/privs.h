/* privs: vxswitchd giving up root after start-up (--user, --group).
 *
 * Started as root with --user USER, the daemon keeps root only while it
 * starts: reads the config, creates the control socket, opens the ports of
 * the config.  Then it becomes USER (group GROUP, or USER's primary group;
 * no supplementary groups) and keeps exactly the capabilities that run-time
 * `port add` / `port del` / `reload` still use, PRIVS_KEPT_CAPS:
 *
 *   CAP_NET_ADMIN  TUNSETIFF on /dev/net/tun (tap ports), rtnetlink
 *                  RTM_NEWLINK/RTM_SETLINK (moving a tap into its VM
 *                  namespace, MTU, up), SO_RCVBUFFORCE / SO_SNDBUFFORCE on
 *                  a vxlan port's UDP socket;
 *   CAP_SYS_ADMIN  setns(CLONE_NEWNET) into a VM's namespace (/run/netns/
 *                  NAME) and back, to open the rtnetlink socket there.
 *
 * Not kept, and why not needed: CAP_NET_RAW (no raw or packet socket: the
 * underlay is a UDP socket, rtnetlink is SOCK_RAW of AF_NETLINK, which
 * needs no capability); CAP_NET_BIND_SERVICE (VXLAN's port 4789 is above
 * 1023); CAP_DAC_OVERRIDE (/dev/net/tun is 0666, /run/netns/NAME 0444; the
 * config file must be readable by USER for `reload`).
 *
 * How, in this order:
 *   1. privs_prepare(), before any thread exists (before vxd_create):
 *      PR_SET_NO_NEW_PRIVS and the bounding set cut to PRIVS_KEPT_CAPS.
 *      Both are per thread and inherited at clone(), so done here they
 *      hold for the datapath worker too; the kept root capabilities are
 *      untouched (the bounding set only limits what execve grants).
 *   2. with --group, the control server chowns its socket to GROUP and
 *      chmods it 0660 between bind() and listen() (ctl/ctl_server.h,
 *      struct ctl_server_opts share_group), so no client meets a socket
 *      still root's.  Root can always connect; the control server also
 *      trusts peers in the daemon's group.
 *   3. privs_drop(), after the config is applied: PR_SET_KEEPCAPS on this
 *      (the control) thread, setgroups(0), setresgid, setresuid (glibc
 *      applies the three to every thread), then capset(): permitted =
 *      effective = PRIVS_KEPT_CAPS, inheritable empty; the ambient set is
 *      cleared and KEEPCAPS reset.  The worker thread, without KEEPCAPS,
 *      lost all its capabilities at setresuid: it only moves packets on
 *      fds it was given.  A check that setuid(0) now fails ends it.
 *
 * Without --user nothing of the above happens except --group: the
 * process's group becomes GROUP (setresgid; a no-op when systemd already
 * started it with Group=GROUP) and the socket is shared as in 2.  That is
 * how the systemd unit runs it: User=/Group= with AmbientCapabilities=
 * PRIVS_KEPT_CAPS, so it never holds root at all.
 *
 * Every function returns 0 or a negative errno and puts one line in err
 * saying which step failed. */
#ifndef VX_CONTROL_PRIVS_H
#define VX_CONTROL_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Capability numbers of linux/capability.h (CAP_NET_ADMIN 12,
 * CAP_SYS_ADMIN 21): the mask /proc/PID/status shows as CapEff. */
#define PRIVS_KEPT_CAPS ((1ull << 12) | (1ull << 21))

struct privs {
	bool set_user;   /* --user given */
	bool set_group;  /* --group given */
	uid_t uid;
	gid_t gid;       /* GROUP, or USER's primary group */
};

enum { PRIVS_ERR_LEN = 160 };

/* Resolve USER and GROUP (names, or numbers); NULL: not given. */
int privs_lookup(struct privs *p, const char *user, const char *group,
		 char err[PRIVS_ERR_LEN]);
/* Step 1 (with --user; else nothing).  Call before starting threads. */
int privs_prepare(const struct privs *p, char err[PRIVS_ERR_LEN]);
/* Step 3 (with --user; with only --group, setresgid). */
int privs_drop(const struct privs *p, char err[PRIVS_ERR_LEN]);

#endif /* VX_CONTROL_PRIVS_H */
