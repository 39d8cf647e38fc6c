/* Unit tests for src/control/control.c and what it dispatches to
 * (stats_print.c, diagnose.c): commands executed against a switch built
 * without a control socket (vxd_execute, as the socket and the config file
 * use it).  The vxlan ports use the loopback device; the tap cases run
 * only as root (they create real TAP devices). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "ctl/ctl_server.h"
#include "control/vxd.h"
#include "ctl/ctl_config.h"
#include "control/vxd_internal.h"
#include "switch/flower_table.h"
#include "util/failpoint.h"
#include "frame_builder.h"
#include "packet/hdr.h"

#define assert_prefix(s, p) assert_true(strncmp((s), (p), strlen(p)) == 0)

static uint16_t test_port;

/* Runs one command line; returns the daemon's status, output in *out
 * (caller releases), error in err. */
static int run(struct vxd *vxd, bool json, struct ctl_print *out, struct ctl_err *err, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	char *words[CTL_MAX_WORDS];
	int n = ctl_split_words(line, words, CTL_MAX_WORDS);
	assert_true(n > 0);
	struct ctl_cmd cmd;
	memset(err, 0, sizeof(*err));
	assert_int_equal(ctl_cmd_parse(n, (const char *const *)words, &cmd, err), 0);
	ctl_print_init(out, json, 0);
	int ret = vxd_execute(vxd, &cmd, out, err);
	assert_int_equal(ctl_print_finish(out), 0);
	return ret;
}

static int setup(void **state)
{
	/* The userspace datapath, as these tests' ports and counters are its
	 * (the default is the kernel one where its programs load: as root). */
	struct vxd_options opts = { .ctl_path = NULL, .pool_size = 64, .quiet = true, .datapath = "user" };
	struct vxd *vxd;
	if (vxd_create(&opts, &vxd) < 0)
		return -1;
	test_port = (uint16_t)(20000 + (getpid() * 13) % 30000);
	*state = vxd;
	return 0;
}

static int teardown(void **state)
{
	vxd_destroy(*state);
	return 0;
}

static void test_vxlan_ports_share_a_socket_and_report_mtu(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx99 type vxlan vni 99 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	/* Loopback routes report an MTU of 65535 (IP_MAX_MTU): 65485 fits. */
	assert_non_null(strstr(ctl_print_data(&out), "inner MTU that fits is 65485"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx100 type vxlan vni 100 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	/* Same VNI again on that socket: refused with a reason. */
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx99b type vxlan vni 99 local 127.0.0.1 remote 127.0.0.3 dstport %u", test_port), -EEXIST);
	assert_non_null(strstr(err.msg, "vni 99 already"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port add vx99 type tap vni 99"), -EEXIST);
	assert_string_equal(err.msg, "port vx99: exists");
	ctl_print_release(&out);

	assert_int_equal(run(vxd, true, &out, &err, "port show"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"name\":\"vx100\""));
	ctl_print_release(&out);

	assert_int_equal(run(vxd, false, &out, &err, "port del vx99"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx99"), -ENOENT);
	assert_string_equal(err.msg, "port vx99: no such port");
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx100"), 0);
	ctl_print_release(&out);
}

static void test_fdb_static_entry_via_remote(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx7 type vxlan vni 7 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:09 vni 7 remote 127.0.0.5"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:09 vni 8 remote 127.0.0.5"), -ENOENT);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb show vni 7"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "02:00:00:00:00:09 vni 7 port vx7 remote 127.0.0.5 static"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb del 02:00:00:00:00:09 vni 7"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb del 02:00:00:00:00:09 vni 7"), -ENOENT);
	ctl_print_release(&out);
	/* Deleting the port flushes what pointed at it. */
	assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:0a vni 7 remote 127.0.0.6"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx7"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb show"), 0);
	assert_string_equal(ctl_print_data(&out), "");
	ctl_print_release(&out);
}

/* diagnose returns CTL_DONE_FINDINGS (the reply status that makes vxctl
 * exit 1) exactly when it has a finding, with the cause in -j. */
static void test_diagnose_verdict(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx8 type vxlan vni 8 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "diagnose"), 0);
	/* Then the workers' line, which is not a finding. */
	assert_prefix(ctl_print_data(&out), "no problem found\nworkers: ");
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set udp-segment off"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "diagnose"), CTL_DONE_FINDINGS);
	assert_non_null(strstr(ctl_print_data(&out), "vx8: udp-segment is off"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "diagnose port vx8"), CTL_DONE_FINDINGS);
	assert_non_null(strstr(ctl_print_data(&out), "{\"cause\":\"offload_off\",\"port\":\"vx8\",\"offload\":\"udp_segment\""));
	assert_non_null(strstr(ctl_print_data(&out), "\"problems\":1"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set udp-segment on"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "diagnose"), 0);
	assert_prefix(ctl_print_data(&out), "{\"findings\":[],\"problems\":0,\"workers\":{\"n\":");
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx8"), 0);
	ctl_print_release(&out);
}

static void test_knobs_set_and_show(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err, "set gro off"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set gro-max-size 32000"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "show knobs"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"gro\":false"));
	assert_non_null(strstr(ctl_print_data(&out), "\"gro-max-size\":32000"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set fdb-max 10"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "show knobs"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"fdb-max\":10"));
	ctl_print_release(&out);
	/* Above the table sized at start-up: refused, the old value stays. */
	assert_int_equal(run(vxd, false, &out, &err, "set fdb-max 100000"), -ERANGE);
	assert_non_null(strstr(err.msg, "fdb-max 100000: above the 65536 learned entries"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "show knobs"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"fdb-max\":10"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set fdb-max 8192"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "diagnose"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set gro on"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "diagnose"), 0);
	/* Then the workers' line, which is not a finding. */
	assert_prefix(ctl_print_data(&out), "no problem found\nworkers: ");
	ctl_print_release(&out);
}

static void test_stats_json_has_every_section(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx5 type vxlan vni 5 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "stats"), 0);
	const char *s = ctl_print_data(&out);
	const char *keys[] = { "\"ports\":[", "\"tx_size_hist\":[", "\"socket\":{", "\"switch\":{",
			       "\"gro\":{", "\"segs_per_frame_hist\":[", "\"gso\":{", "\"cpu\":{", "\"us_per_kb\":" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_non_null(strstr(s, keys[i]));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "stats port nosuch"), -ENOENT);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx5"), 0);
	ctl_print_release(&out);
}

static void test_tap_port_warns_when_mtu_does_not_fit(void **state)
{
	if (geteuid() != 0)
		skip();
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	/* A veth-like 1500 underlay is not at hand without root netns work;
	 * loopback gives 65485 as what fits, so ask for a bigger VM MTU. */
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx3 type vxlan vni 3 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	char name[16];
	snprintf(name, sizeof(name), "vxut%d", (int)(getpid() % 100000));
	assert_int_equal(run(vxd, false, &out, &err, "port add %s type tap vni 3 mtu 65521", name), 0);
	assert_non_null(strstr(ctl_print_data(&out), "is larger than the 65485 that fits"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del %s", name), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx3"), 0);
	ctl_print_release(&out);
}

/* The VNI table of the view the worker reads now. */
static const struct vni *published_vni(struct vxd *vxd, uint32_t vni)
{
	return vni_lookup(vxd_view(vxd)->vnis, vni);
}

/* True when any VNI but `except` lists port `id` (as a local port or as
 * the vxlan port of a VTEP). */
static bool id_in_another_vni(struct vxd *vxd, uint16_t id, uint32_t except)
{
	const struct vni_table *t = vxd_view(vxd)->vnis;
	for (uint32_t i = 0; i < vni_table_count(t); i++) {
		const struct vni *v = vni_table_at(t, i);
		if (v->vni == except)
			continue;
		if (vni_has_port(v, id))
			return true;
		for (unsigned j = 0; j < v->n_vteps; j++)
			if (v->vteps[j].port == id)
				return true;
	}
	return false;
}

/* A port removal whose new VNI table cannot be allocated is refused and
 * changes nothing.  It used to go ahead with the old table: the VNI kept
 * the freed port id, the next port got that id and the old VNI's floods. */
static void test_port_del_refused_when_vni_table_cannot_be_built(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx21 type vxlan vni 21 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx22 type vxlan vni 22 local 127.0.0.1 remote 127.0.0.3 dstport %u", test_port), 0);
	ctl_print_release(&out);
	uint16_t id22 = vxd_port_by_name(vxd, "vx22")->id;

	failpoint_arm("vni_table_clone", 0, 1);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx22"), -ENOMEM);
	failpoint_disarm_all();
	ctl_print_release(&out);
	assert_non_null(strstr(err.msg, "the port stays"));
	assert_non_null(vxd_port_by_name(vxd, "vx22"));
	assert_non_null(published_vni(vxd, 22));

	assert_int_equal(run(vxd, false, &out, &err, "port del vx22"), 0);
	ctl_print_release(&out);
	assert_null(published_vni(vxd, 22));
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx23 type vxlan vni 23 local 127.0.0.1 remote 127.0.0.4 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(vxd_port_by_name(vxd, "vx23")->id, id22); /* the id is reused... */
	assert_false(id_in_another_vni(vxd, id22, 23));           /* ...and only VNI 23 has it */
	assert_int_equal(run(vxd, false, &out, &err, "port del vx23"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx21"), 0);
	ctl_print_release(&out);
}

/* A failed port add (the VNI table cannot be built) leaves no trace. */
static void test_port_add_refused_when_vni_table_cannot_be_built(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	failpoint_arm("vni_table_clone", 0, 1);
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx31 type vxlan vni 31 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port),
			 -ENOMEM);
	failpoint_disarm_all();
	ctl_print_release(&out);
	assert_null(vxd_port_by_name(vxd, "vx31"));
	assert_null(published_vni(vxd, 31));
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx31 type vxlan vni 31 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx31"), 0);
	ctl_print_release(&out);
}

/* A static entry's port must be a tap of the entry's VNI: a vxlan port
 * there sent every frame to the MAC into port_not_in_vni. */
static void test_fdb_add_refuses_a_port_that_cannot_deliver(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx41 type vxlan vni 41 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:41 vni 41 port vx41"), -EINVAL);
	ctl_print_release(&out);
	assert_non_null(strstr(err.msg, "remote"));
	if (geteuid() == 0) {
		char name[16];
		snprintf(name, sizeof(name), "vxf%d", (int)(getpid() % 100000));
		assert_int_equal(run(vxd, false, &out, &err, "port add %s type tap vni 42", name), 0);
		ctl_print_release(&out);
		assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:41 vni 41 port %s", name), -EINVAL);
		ctl_print_release(&out);
		assert_non_null(strstr(err.msg, "not vni 41"));
		assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:42 vni 42 port %s", name), 0);
		ctl_print_release(&out);
		assert_int_equal(run(vxd, false, &out, &err, "port del %s", name), 0);
		ctl_print_release(&out);
	}
	assert_int_equal(run(vxd, false, &out, &err, "port del vx41"), 0);
	ctl_print_release(&out);
}

/* ---- the GRO hold timer, on a warped clock ------------------------------------ */

static _Atomic uint64_t warped_ns = 1000000000ull;

static uint64_t warped_clock(void)
{
	return atomic_load(&warped_ns);
}

/* One inner TCP segment (no PSH: GRO holds it as the start of a run) in a
 * VXLAN datagram of `vni`, sent to the daemon's socket on loopback. */
static void send_held_segment(int udp, uint32_t vni, uint32_t seq)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	memcpy(f.dst_mac, (uint8_t[6]){ 0x02, 0, 0, 0, 0x77, 0x01 }, 6);
	memcpy(f.src_mac, (uint8_t[6]){ 0x02, 0, 0, 0, 0x77, 0x02 }, 6);
	f.tcp_flags = TCP_ACK;
	f.seq = seq;
	f.payload_len = 1000;
	uint8_t inner[2048], buf[2200];
	size_t ilen = fb_build(&f, inner, sizeof(inner), NULL);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 0, vni);
	size_t len = fb_wrap_vxlan(&vx, inner, ilen, buf, sizeof(buf));
	assert_true(len > 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(test_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(sendto(udp, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
}

/* Frames the daemon wrote to the tap, seen on the tap's netdev. */
static int frames_on(int pkt_sock, int wait_ms)
{
	int n = 0;
	struct pollfd pfd = { .fd = pkt_sock, .events = POLLIN };
	while (poll(&pfd, 1, n ? 0 : wait_ms) > 0) {
		uint8_t b[70000];
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t r = recvfrom(pkt_sock, b, sizeof(b), 0, (struct sockaddr *)&from, &fl);
		if (r > ETH_HDR_LEN && from.sll_pkttype != PACKET_OUTGOING && b[12] == 0x08 && b[13] == 0x00)
			n++;
	}
	return n;
}

/* gro-hold-us N holds a run across polls until N µs after its first
 * segment, on the worker's clock (warped here, never slept); 0 completes it
 * when the poll ends.  It used to be ignored: every poll ended with a full
 * flush, and 0 silently meant 50 µs. */
static void test_gro_hold_timer_is_real(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	/* A pool big enough that runs are not completed early for want of
	 * buffers (pool_low_flushes). */
	struct vxd_options opts = { .pool_size = 2048, .quiet = true, .datapath = "user", .clock = warped_clock };
	struct vxd *vxd;
	assert_int_equal(vxd_create(&opts, &vxd), 0);
	struct ctl_print out;
	struct ctl_err err;
	char tap[16];
	snprintf(tap, sizeof(tap), "vxh%d", (int)(getpid() % 100000));
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vxh type vxlan vni 77 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port add %s type tap vni 77", tap), 0);
	ctl_print_release(&out);
	int ps = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	assert_true(ps >= 0);
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex(tap) };
	assert_int_equal(bind(ps, (struct sockaddr *)&ll, sizeof(ll)), 0);
	int udp = socket(AF_INET, SOCK_DGRAM, 0);
	/* From the port's remote: datagrams from anywhere else are refused. */
	struct sockaddr_in from = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002) };
	assert_int_equal(bind(udp, (struct sockaddr *)&from, sizeof(from)), 0);
	frames_on(ps, 50); /* whatever the kernel said on the new link */

	assert_int_equal(run(vxd, false, &out, &err, "set gro-hold-us 1000"), 0);
	ctl_print_release(&out);
	send_held_segment(udp, 77, 1000);
	assert_int_equal(frames_on(ps, 300), 0);       /* held: the clock stands still */
	atomic_fetch_add(&warped_ns, 900000);           /* 900 µs: not yet */
	assert_int_equal(frames_on(ps, 200), 0);
	atomic_fetch_add(&warped_ns, 200000);           /* 1.1 ms after the first segment */
	assert_int_equal(frames_on(ps, 2000), 1);

	assert_int_equal(run(vxd, true, &out, &err, "stats"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"timeout\":1"));
	ctl_print_release(&out);

	assert_int_equal(run(vxd, false, &out, &err, "set gro-hold-us 0"), 0);
	ctl_print_release(&out);
	send_held_segment(udp, 77, 5000);
	assert_int_equal(frames_on(ps, 2000), 1);       /* no clock change needed */

	close(udp);
	close(ps);
	/* The tap is persistent: a shutdown would leave it behind. */
	assert_int_equal(run(vxd, false, &out, &err, "port del %s", tap), 0);
	ctl_print_release(&out);
	vxd_destroy(vxd);
}

/* One command whose output is not looked at: its status, err kept. */
static int run_status(struct vxd *vxd, struct ctl_err *err, const char *line)
{
	struct ctl_print out;
	int ret = run(vxd, false, &out, err, "%s", line);
	ctl_print_release(&out);
	return ret;
}

/* A -batch (CTL_BATCH) as the control server hands it over: a bad line
 * refused naming FILE:LINE, nothing applied; a good one is one change. */
static void test_batch(struct vxd *vxd)
{
	struct ctl_config cfg;
	char msg[CTL_CONFIG_ERR_SIZE];
	const char *bad = "filter add dev vx7 ingress pref 5 protocol ip flower action drop\n"
			  "# x\n"
			  "filter add dev vx7 ingress pref 6 protocol ip flower action mirred egress redirect dev nosuch\n";
	assert_int_equal(ctl_config_parse_batch("b", bad, strlen(bad), &cfg, msg, sizeof(msg)), 0);
	struct ctl_cmd cmd = { .verb = CTL_BATCH, .batch = { "b", cfg.cmds, cfg.lines, cfg.n_cmds } };
	struct ctl_print out;
	struct ctl_err err = { 0 };
	size_t n0 = vxd_filters_n(vxd);
	ctl_print_init(&out, false, 0);
	assert_int_equal(vxd_execute(vxd, &cmd, &out, &err), -ENOENT);
	ctl_print_release(&out);
	assert_string_equal(err.msg, "b:3: mirred dev \"nosuch\": no such port");
	assert_int_equal(vxd_filters_n(vxd), n0);
	ctl_config_release(&cfg);
	const char *good = "filter add dev vx7 ingress pref 5 protocol ip flower action drop\n"
			   "filter add dev vx7 ingress pref 6 protocol ip flower action drop\n"
			   "filter del dev vx7 ingress pref 5\n";
	assert_int_equal(ctl_config_parse_batch("b", good, strlen(good), &cfg, msg, sizeof(msg)), 0);
	cmd.batch = (struct ctl_batch){ "b", cfg.cmds, cfg.lines, cfg.n_cmds };
	uint64_t v0 = flower_table_version(vxd->flower);
	ctl_print_init(&out, false, 0);
	assert_int_equal(vxd_execute(vxd, &cmd, &out, &err), 0);
	ctl_print_release(&out);
	assert_int_equal(flower_table_version(vxd->flower), v0 + 1);
	assert_int_equal(vxd_filters_n(vxd), n0 + 1);
	assert_int_equal(vxd_filter_spec(vxd, n0)->pref, 6);
	ctl_config_release(&cfg);
	assert_int_equal(run_status(vxd, &err, "filter del dev vx7 ingress pref 6"), 0);
}

/* filter add|del|show on the control thread: a rule naming a missing port
 * is refused, a port named by rules cannot be deleted, a tunnel_key src_ip
 * other than the target port's is refused at add (its VNI, port and
 * checksum are the frame's), a -batch applies whole or not at all, rules are in show config, and show -s reads
 * the worker's counters through a SNAPSHOT request (TSan watches it). */
static void test_filters(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx7 type vxlan vni 7 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx8 type vxlan vni 8 local 127.0.0.1 remote 127.0.0.3 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run_status(vxd, &err, "filter add dev vx7 pref 2 ingress protocol ip flower "
			     "action mirred egress redirect dev vx9"), -ENOENT);
	assert_non_null(strstr(err.msg, "vx9"));
	assert_int_equal(run_status(vxd, &err, "filter add dev vx7 ingress pref 2 protocol ip flower action tunnel_key "
			     "set id 9 src_ip 127.0.0.9 dst_ip 127.0.0.3 action mirred egress redirect dev vx8"), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "\"src_ip\": refused"));
	/* another VNI, UDP port, checksum: the frame's own key (on the wire:
	 * tests/netns/test_flower_tunnel_key.sh) */
	assert_int_equal(run_status(vxd, &err, "filter add dev vx7 ingress pref 3 protocol ip flower action tunnel_key "
			     "set id 9 src_ip 127.0.0.1 dst_ip 127.0.0.3 dst_port 4790 nocsum "
			     "action mirred egress redirect dev vx8"), 0);
	assert_int_equal(run_status(vxd, &err, "filter del dev vx7 ingress pref 3"), 0);
	test_batch(vxd);
	assert_int_equal(run_status(vxd, &err, "filter add dev vx7 pref 2 ingress protocol ip flower "
			     "action mirred egress redirect dev vx8"), 0);
	assert_int_equal(run(vxd, false, &out, &err, "filter show -s dev vx7 ingress"), 0);
	/* tc's layout (golden cases: tests/unit/ctl/test_ctl_flower_show.c) */
	assert_string_equal(ctl_print_data(&out),
			    "filter protocol ip pref 2 flower chain 0 \n"
			    "filter protocol ip pref 2 flower chain 0 handle 0x1 \n  eth_type ipv4\n  not_in_hw\n"
			    "\taction order 1: mirred (Egress Redirect to device vx8) stolen\n"
			    "\tindex 1 ref 1 bind 1 installed 0 sec used 0 sec\n"
			    "\tAction statistics:\n"
			    "\tSent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"
			    "\tbacklog 0b 0p requeues 0\n\n");
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "show config"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\nfilter add dev vx7 ingress pref 2 handle 1 protocol ip"));
	ctl_print_release(&out);
	assert_int_equal(run_status(vxd, &err, "port del vx8"), -EBUSY);
	assert_non_null(strstr(err.msg, "named by 1 flower rule"));
	assert_int_equal(run_status(vxd, &err, "filter del dev vx7 ingress pref 2"), 0);
	assert_int_equal(run(vxd, false, &out, &err, "filter show dev vx7 ingress"), 0);
	assert_string_equal(ctl_print_data(&out), "");
	ctl_print_release(&out);
	assert_int_equal(run_status(vxd, &err, "port del vx8"), 0);
	assert_int_equal(run_status(vxd, &err, "port del vx7"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vxlan_ports_share_a_socket_and_report_mtu),
		cmocka_unit_test(test_fdb_static_entry_via_remote),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_knobs_set_and_show),
		cmocka_unit_test(test_diagnose_verdict),
		cmocka_unit_test(test_stats_json_has_every_section),
		cmocka_unit_test(test_tap_port_warns_when_mtu_does_not_fit),
		cmocka_unit_test(test_port_del_refused_when_vni_table_cannot_be_built),
		cmocka_unit_test(test_port_add_refused_when_vni_table_cannot_be_built),
		cmocka_unit_test(test_fdb_add_refuses_a_port_that_cannot_deliver),
		cmocka_unit_test(test_gro_hold_timer_is_real),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
