/* refuse_offloads.so: FAULT INJECTION at the libc boundary, for tests only.
 *
 * vxswitchd probes every kernel offload at start-up and falls back when one
 * is refused, but the kernel of the test machine (6.18) accepts them all:
 * it refuses UDP_SEGMENT only for UDP-Lite or an IPsec route, and has no
 * ESP/AH built in.  So the refusals are made here, by an LD_PRELOAD object
 * that answers some calls the way an older or stricter kernel would and
 * hands every other call to the real libc function (dlsym(RTLD_NEXT)).
 *
 *   LD_PRELOAD=build/tests/tools/refuse_offloads.so VXT_REFUSE=udp_gro,tap_tso vxswitchd ...
 *
 * VXT_REFUSE is a comma list of:
 *   udp_gro            setsockopt(IPPROTO_UDP, UDP_GRO) fails with ENOPROTOOPT
 *                      (kernels before 5.0)
 *   udp_segment_probe  getsockopt/setsockopt(IPPROTO_UDP, UDP_SEGMENT) fail
 *                      with ENOPROTOOPT (kernels before 4.18)
 *   udp_segment_send   a message carrying a SOL_UDP/UDP_SEGMENT cmsg fails
 *                      with EIO, as the kernel answers when the egress
 *                      device has no checksum offload: sendmsg returns -1;
 *                      sendmmsg sends the messages before the first refused
 *                      one and returns their count, or -1 if it is the first
 *   tap_uso            ioctl(TUNSETOFFLOAD) with TUN_F_USO4/USO6 fails with
 *                      EINVAL (kernels before 6.2)
 *   tap_tso            ioctl(TUNSETOFFLOAD) with TUN_F_TSO4/TSO6/TSO_ECN fails
 *                      with EINVAL
 * An unknown word stops the program at load: a typo must not silently test
 * nothing.  The refusals in force are written once to stderr at load. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif

enum refusal {
	REFUSE_UDP_GRO = 1 << 0,
	REFUSE_UDP_SEGMENT_PROBE = 1 << 1,
	REFUSE_UDP_SEGMENT_SEND = 1 << 2,
	REFUSE_TAP_USO = 1 << 3,
	REFUSE_TAP_TSO = 1 << 4,
};

static const struct {
	const char *name;
	unsigned bit;
} refusal_names[] = {
	{ "udp_gro", REFUSE_UDP_GRO },
	{ "udp_segment_probe", REFUSE_UDP_SEGMENT_PROBE },
	{ "udp_segment_send", REFUSE_UDP_SEGMENT_SEND },
	{ "tap_uso", REFUSE_TAP_USO },
	{ "tap_tso", REFUSE_TAP_TSO },
};

static unsigned refused;

static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_getsockopt)(int, int, int, void *, socklen_t *);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static int (*real_sendmmsg)(int, struct mmsghdr *, unsigned int, int);
static int (*real_ioctl)(int, unsigned long, ...);

static void *refuse_real(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	if (!fn) {
		fprintf(stderr, "refuse_offloads: no real %s: %s\n", name, dlerror());
		_exit(2);
	}
	return fn;
}

/* Runs before main (and before any thread): the table of real functions
 * is written once here and only read afterwards. */
__attribute__((constructor)) static void refuse_init(void)
{
	real_setsockopt = refuse_real("setsockopt");
	real_getsockopt = refuse_real("getsockopt");
	real_sendmsg = refuse_real("sendmsg");
	real_sendmmsg = refuse_real("sendmmsg");
	real_ioctl = refuse_real("ioctl");

	const char *env = getenv("VXT_REFUSE");
	if (!env || !*env)
		return;
	char list[256];
	snprintf(list, sizeof(list), "%s", env);
	char *save = NULL;
	for (char *word = strtok_r(list, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
		unsigned bit = 0;
		for (size_t i = 0; i < sizeof(refusal_names) / sizeof(refusal_names[0]); i++)
			if (strcmp(word, refusal_names[i].name) == 0)
				bit = refusal_names[i].bit;
		if (!bit) {
			fprintf(stderr, "refuse_offloads: unknown refusal '%s' in VXT_REFUSE\n", word);
			_exit(2);
		}
		refused |= bit;
	}
	fprintf(stderr, "refuse_offloads: injecting refusals: %s\n", env);
}

static int refuse_with(int err)
{
	errno = err;
	return -1;
}

int setsockopt(int fd, int level, int optname, const void *optval, socklen_t optlen)
{
	if (level == IPPROTO_UDP) {
		if (optname == UDP_GRO && (refused & REFUSE_UDP_GRO))
			return refuse_with(ENOPROTOOPT);
		if (optname == UDP_SEGMENT && (refused & REFUSE_UDP_SEGMENT_PROBE))
			return refuse_with(ENOPROTOOPT);
	}
	return real_setsockopt(fd, level, optname, optval, optlen);
}

int getsockopt(int fd, int level, int optname, void *restrict optval, socklen_t *restrict optlen)
{
	if (level == IPPROTO_UDP && optname == UDP_SEGMENT && (refused & REFUSE_UDP_SEGMENT_PROBE))
		return refuse_with(ENOPROTOOPT);
	return real_getsockopt(fd, level, optname, optval, optlen);
}

/* Whether the message asks for UDP segmentation (a SOL_UDP/UDP_SEGMENT
 * cmsg, whatever its value: the kernel refuses before reading it). */
static bool msg_has_udp_segment(const struct msghdr *msg)
{
	if (!msg->msg_control || msg->msg_controllen < sizeof(struct cmsghdr))
		return false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c))
		if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_SEGMENT)
			return true;
	return false;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if ((refused & REFUSE_UDP_SEGMENT_SEND) && msg && msg_has_udp_segment(msg))
		return refuse_with(EIO);
	return real_sendmsg(fd, msg, flags);
}

int sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags)
{
	if (!(refused & REFUSE_UDP_SEGMENT_SEND) || !msgs)
		return real_sendmmsg(fd, msgs, vlen, flags);
	/* The kernel sends in order and stops at the first failure: the
	 * messages before it count as sent, the error is reported only if
	 * nothing was sent. */
	unsigned first_refused = 0;
	while (first_refused < vlen && !msg_has_udp_segment(&msgs[first_refused].msg_hdr))
		first_refused++;
	if (first_refused == 0 && vlen > 0)
		return refuse_with(EIO);
	return real_sendmmsg(fd, msgs, first_refused, flags);
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (request == TUNSETOFFLOAD) {
		unsigned long mask = (unsigned long)arg;
		if ((refused & REFUSE_TAP_USO) && (mask & (TUN_F_USO4 | TUN_F_USO6)))
			return refuse_with(EINVAL);
		if ((refused & REFUSE_TAP_TSO) && (mask & (TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN)))
			return refuse_with(EINVAL);
	}
	return real_ioctl(fd, request, arg);
}
