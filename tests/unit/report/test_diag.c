/* Unit tests for diagnose's judgement (src/report/diag.h): crafted
 * snapshots of a switch with one tap (vnet1) and one vxlan port (vx99) in
 * VNI 99, for every cause, and the healthy cases that must give no
 * finding: idle, bulk TCP into the VM, the ACK-only direction, an Open
 * vSwitch-like peer (MTU-sized datagrams, ACKs passed through), small UDP. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/diag.h"
#include "port/tap.h"

#define SEC 1000000000ull
#define TAP 1
#define VX 2

struct fx {
	struct diag_input in;
	struct vxd_snapshot now, then;
	struct diag_report r;
};

static struct diag_port *port(struct fx *f, unsigned id, enum diag_port_kind kind, const char *name, uint32_t vni)
{
	struct diag_port *p = &f->in.ports[id];
	p->kind = kind;
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->vni = vni;
	p->mtu = 1450;
	p->kernel_ok = true;
	p->dst_port = 4789;
	p->family = 4;
	p->inner_mtu_fit = 1450;
	p->underlay_mtu = 1500;
	struct vxd_port_snap *ps = &f->now.ports[id];
	ps->present = true;
	ps->tap.offloads_probed = ps->tap.offloads_active = TAP_OL_CSUM | TAP_OL_TSO | TAP_OL_USO;
	ps->sock.udp_gro_probed = ps->sock.udp_gro_on = true;
	ps->sock.udp_segment_probed = ps->sock.udp_segment_on = true;
	f->then.ports[id] = *ps;
	return p;
}

/* The remote 198.51.100.2 of vx99, last heard from `ago` s before now,
 * with `unanswered` frames sent since. */
static struct vxd_vtep_stats *vtep(struct fx *f, uint64_t ago, uint64_t unanswered)
{
	struct vxd_vtep_stats *v = &f->now.vteps[f->now.n_vteps++];
	v->port = VX;
	v->family = 4;
	v->addr[0] = 198, v->addr[1] = 51, v->addr[2] = 100, v->addr[3] = 2;
	v->tx_frames = 1000 + unanswered;
	v->rx_datagrams = ago < 100 ? 900 : 0; /* 100 s: never */
	v->last_rx_ns = ago < 100 ? f->now.taken_ns - ago * SEC : 0;
	v->tx_since_rx = unanswered;
	v->unanswered_ns = unanswered ? f->now.taken_ns - ago * SEC : 0;
	return v;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->in.now = &f->now;
	f->in.then = &f->then;
	f->in.underlay_node = -1;
	f->in.underlay = "";
	f->in.knobs[CTL_KNOB_GRO] = f->in.knobs[CTL_KNOB_GSO] = f->in.knobs[CTL_KNOB_TAP_TSO] = 1;
	f->in.knobs[CTL_KNOB_UDP_GRO] = f->in.knobs[CTL_KNOB_UDP_SEGMENT] = f->in.knobs[CTL_KNOB_RX_CSUM] = 1;
	f->in.knobs[CTL_KNOB_GRO_HOLD_US] = 50;
	f->in.knobs[CTL_KNOB_FDB_MAX] = 8192;
	f->then.taken_ns = 100 * SEC;
	f->now.taken_ns = 106 * SEC;
	port(f, TAP, DIAG_PORT_TAP, "vnet1", 99);
	port(f, VX, DIAG_PORT_VXLAN, "vx99", 99);
	vtep(f, 0, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static const struct diag_report *judge(struct fx *f)
{
	diag_judge(&f->in, &f->r);
	for (unsigned i = 0; i < f->r.n; i++)
		printf("  [%s] %s\n", diag_cause_name(f->r.f[i].cause), f->r.f[i].text);
	return &f->r;
}

static void assert_no_finding(struct fx *f)
{
	assert_int_equal(diag_problems(judge(f)), 0);
}

static const struct diag_finding *assert_cause(struct fx *f, enum diag_cause cause)
{
	const struct diag_finding *fd = diag_find(judge(f), cause);
	if (!fd)
		fail_msg("no %s finding", diag_cause_name(cause));
	assert_true(diag_problems(&f->r) > 0);
	return fd;
}

/* Window counters: frames delivered to vnet1 in the window. */
static void tap_tx(struct fx *f, uint64_t frames, uint64_t bytes, uint64_t tiny, uint64_t tiny_bytes)
{
	struct port_stats *s = &f->now.ports[TAP].stats;
	s->tx_frames = f->then.ports[TAP].stats.tx_frames + frames;
	s->tx_bytes = f->then.ports[TAP].stats.tx_bytes + bytes;
	s->tx_tiny_frames = f->then.ports[TAP].stats.tx_tiny_frames + tiny;
	s->tx_tiny_bytes = f->then.ports[TAP].stats.tx_tiny_bytes + tiny_bytes;
}

/* GRO in the window: `segs` TCP segments with payload into `frames`
 * frames, plus `acks` pure ACKs passed through. */
static void gro(struct fx *f, uint64_t segs, uint64_t frames, uint64_t acks)
{
	struct gro_stats *g = &f->now.gro;
	g->segments_in = segs + acks;
	g->frames_out = frames + acks;
	g->passthrough[GRO_PASS_PURE_ACK] = acks;
	g->flushes[GRO_FLUSH_SHORT_SEGMENT] = frames;
}

static void sock_rx(struct fx *f, uint64_t dgrams, uint64_t coalesced, uint64_t bytes)
{
	struct vxlan_sock_stats *s = &f->now.ports[VX].sock;
	s->rx_datagrams = dgrams;
	s->rx_gro_buffers = coalesced;
	s->rx_bytes = bytes;
}

/* ---- healthy: no finding ---------------------------------------------------- */

static void test_idle_switch(void **state)
{
	assert_no_finding(*state);
}

static void test_bulk_tcp_into_the_vm(void **state)
{
	struct fx *f = *state;
	tap_tx(f, 100000 + 5000, 100000ull * 60000 + 5000 * 66, 5000, 5000 * 66);
	gro(f, 4500000, 100000, 5000);
	sock_rx(f, 4500000, 70000, 4500000ull * 1450);
	f->now.cpu_user_us = 2000000, f->now.cpu_sys_us = 1000000; /* half a core over 6 s */
	assert_no_finding(f);
}

/* The VM only sends data: what reaches it is ACKs, all tiny, all passed
 * through GRO.  The old heuristic called this "GRO rarely merges". */
static void test_ack_only_direction(void **state)
{
	struct fx *f = *state;
	tap_tx(f, 300000, 300000ull * 66, 300000, 300000ull * 66);
	gro(f, 0, 0, 300000);
	sock_rx(f, 300000, 0, 300000ull * 116);
	assert_no_finding(f);
}

/* An Open vSwitch peer (userspace datapath): MTU-sized datagrams, none
 * coalesced by the kernel, our GRO merges them; its ACKs for the other
 * direction pass through.  Frames to the VM average 3.2 KB with the ACKs
 * counted (the old "the traffic is small frames"), ~21 KB without. */
static void test_ovs_like_peer(void **state)
{
	struct fx *f = *state;
	uint64_t acks = 130000, data = 20000;
	tap_tx(f, data + acks, data * 21000 + acks * 66, acks, acks * 66);
	gro(f, 300000, data, acks);
	sock_rx(f, 300000 + acks, 0, 300000ull * 1450 + acks * 116);
	assert_true((f->now.ports[TAP].stats.tx_bytes) / (data + acks) < 4096);
	assert_no_finding(f);
}

/* The same peer slower (0.8 Gbit/s in the netns rig): datagrams trickle
 * in and GRO merges ~3 segments a frame, 4.2 KB: the peer sets the pace,
 * not us.  One segment a frame less and it is a finding. */
static void test_slow_ovs_like_peer(void **state)
{
	struct fx *f = *state;
	uint64_t acks = 60000, data = 20000;
	tap_tx(f, data + acks, data * 4200 + acks * 66, acks, acks * 66);
	gro(f, 3 * data, data, acks);
	sock_rx(f, 3 * data + acks, 0, 3 * data * 1450 + acks * 116);
	assert_no_finding(f);
	tap_tx(f, data + acks, data * 2700 + acks * 66, acks, acks * 66);
	gro(f, 19 * data / 10, data, acks);
	assert_cause(f, DIAG_SMALL_FRAMES_NO_TSO);
}

/* Small frames that are not TCP (a UDP stream): nothing GRO could do. */
static void test_small_udp_is_no_problem(void **state)
{
	struct fx *f = *state;
	tap_tx(f, 50000, 50000ull * 1400, 0, 0);
	f->now.gro.segments_in = f->now.gro.frames_out = f->now.gro.passthrough[GRO_PASS_NOT_TCP] = 50000;
	sock_rx(f, 50000, 0, 50000ull * 1450);
	assert_no_finding(f);
}

static void test_a_note_is_no_problem(void **state)
{
	struct fx *f = *state;
	f->now.rx_csum.finished = 12345;
	const struct diag_report *r = judge(f);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->f[0].cause, DIAG_NOTE_CSUM_FINISHED);
	assert_int_equal(diag_problems(r), 0);
}

/* Floods from a VTEP while the VNI had no local port (a start between the
 * vxlan port and the tap): no problem, and no note once the tap is there;
 * a note while the VNI has no local port. */
static void test_no_local_port_drops(void **state)
{
	struct fx *f = *state;
	f->now.ports[VX].stats.drops[DROP_NO_LOCAL_PORT] = 1;
	assert_no_finding(f);
	f->in.ports[TAP].kind = DIAG_PORT_NONE;
	f->now.ports[VX].stats.drops[DROP_NO_LOCAL_PORT] = 30;
	const struct diag_report *r = judge(f);
	const struct diag_finding *fd = diag_find(r, DIAG_NOTE_VNI_NO_LOCAL_PORT);
	assert_non_null(fd);
	assert_int_equal(diag_problems(r), 0);
	assert_int_equal(diag_field_num(fd, "dropped"), 30);
	assert_non_null(strstr(fd->text, "vx99: VNI 99 has no local port: 30 frames flooded here by remote VTEPs"));
	/* Other drops of the port are still a problem beside it. */
	f->now.ports[VX].stats.drops[DROP_TRUNCATED_VXLAN] = 2;
	assert_non_null(strstr(assert_cause(f, DIAG_PORT_DROPS)->text, "2 frames dropped as truncated_vxlan"));
}

/* ---- remote VTEPs ----------------------------------------------------------- */

static void test_remote_silent(void **state)
{
	struct fx *f = *state;
	f->now.n_vteps = 0;
	vtep(f, 100, 25); /* never heard from, 25 frames sent over 100 s */
	const struct diag_finding *fd = assert_cause(f, DIAG_REMOTE_SILENT);
	assert_string_equal(fd->port, "vx99");
	assert_int_equal(diag_field_num(fd, "sent"), 25);
	assert_int_equal(diag_field_num(fd, "dstport"), 4789);
	assert_int_equal(diag_field_num(fd, "rx_datagrams"), 0);
	assert_non_null(strstr(fd->text, "remote VTEP 198.51.100.2 is silent"));
	assert_non_null(strstr(fd->text, "check its address"));
	assert_int_equal(diag_field_num(fd, "csum_unfinished"), 0);
	assert_null(strstr(fd->text, "unfinished"));
	assert_int_equal(diag_field_num(fd, "icmp_port_unreach"), 0);
	assert_null(strstr(fd->text, "ICMP"));
}

/* The socket got ICMP port unreachable back for datagrams to that remote
 * (a dstport mismatch): the finding says nothing listens there; ICMP for
 * another remote says nothing about this one. */
static void test_remote_silent_port_unreachable(void **state)
{
	struct fx *f = *state;
	f->now.n_vteps = 0;
	vtep(f, 100, 25);
	struct vxlan_sock_stats *ss = &f->now.ports[VX].sock;
	ss->n_icmp_remotes = 2;
	ss->icmp_remotes[0] = (struct vxlan_icmp_remote){ .addr = { .family = 4, .bytes = { 198, 51, 100, 7 } },
							  .port_unreach = 99 };
	ss->icmp_remotes[1] = (struct vxlan_icmp_remote){ .addr = { .family = 4, .bytes = { 198, 51, 100, 2 } },
							  .port_unreach = 6, .other = 1 };
	const struct diag_finding *fd = assert_cause(f, DIAG_REMOTE_SILENT);
	assert_int_equal(diag_field_num(fd, "icmp_port_unreach"), 6);
	assert_non_null(strstr(fd->text, "6 ICMP port unreachable came back from it: nothing listens on UDP 4789 there"));
	ss->icmp_remotes[1].addr.bytes[3] = 3;
	fd = assert_cause(f, DIAG_REMOTE_SILENT);
	assert_int_equal(diag_field_num(fd, "icmp_port_unreach"), 0);
}

/* Behind a veth that leaves our checksums unfinished, the likely cause is
 * named too (an Open vSwitch peer drops such datagrams). */
static void test_remote_silent_csum_unfinished(void **state)
{
	struct fx *f = *state;
	f->now.n_vteps = 0;
	vtep(f, 100, 25);
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++)
		if (f->in.ports[i].kind == DIAG_PORT_VXLAN) {
			f->in.ports[i].csum_unfinished = true;
			snprintf(f->in.ports[i].link_dev, sizeof(f->in.ports[i].link_dev), "u1");
		}
	const struct diag_finding *fd = assert_cause(f, DIAG_REMOTE_SILENT);
	assert_int_equal(diag_field_num(fd, "csum_unfinished"), 1);
	assert_non_null(strstr(fd->text, "leave the veth u1 unfinished"));
	assert_non_null(strstr(fd->text, "udpcsum off"));
}

static void test_remote_not_silent_yet(void **state)
{
	struct fx *f = *state;
	f->now.n_vteps = 0;
	vtep(f, 2, 400);  /* answered 2 s ago: under DIAG_SILENT_NS */
	assert_no_finding(f);
	f->now.n_vteps = 0;
	vtep(f, 10, DIAG_SILENT_MIN_FRAMES - 1); /* too few frames to tell */
	assert_no_finding(f);
	f->now.n_vteps = 0;
	vtep(f, 10, DIAG_SILENT_MIN_FRAMES);
	assert_int_equal(diag_field_num(assert_cause(f, DIAG_REMOTE_SILENT), "silent_s"), 10);
}

/* ---- how the switch is built ------------------------------------------------ */

static void test_tap_alone_in_its_vni(void **state)
{
	struct fx *f = *state;
	port(f, 3, DIAG_PORT_TAP, "vnet3", 7);
	f->now.ports[3].stats.drops[DROP_FDB_DST_UNKNOWN] = 5;
	const struct diag_finding *fd = assert_cause(f, DIAG_VNI_NO_VXLAN);
	assert_string_equal(fd->port, "vnet3");
	assert_int_equal(diag_field_num(fd, "vni"), 7);
	assert_int_equal(diag_field_num(fd, "fdb_dst_unknown"), 5);
}

/* Two VMs switched locally in a VNI of their own, on a switch without an
 * underlay: a choice, not a fault. */
static void test_local_vni_without_underlay_is_fine(void **state)
{
	struct fx *f = *state;
	memset(&f->in.ports[VX], 0, sizeof(f->in.ports[VX]));
	f->now.n_vteps = 0;
	port(f, 3, DIAG_PORT_TAP, "vnet3", 99);
	assert_no_finding(f);
}

static void test_mtu_over_the_underlay(void **state)
{
	struct fx *f = *state;
	f->in.ports[TAP].mtu = 1500;
	const struct diag_finding *fd = assert_cause(f, DIAG_MTU_UNDERLAY);
	assert_int_equal(diag_field_num(fd, "mtu"), 1500);
	assert_int_equal(diag_field_num(fd, "fits"), 1450);
	assert_non_null(strstr(fd->text, "set the VM MTU to 1450"));
}

static void test_offloads_refused_or_off(void **state)
{
	struct fx *f = *state;
	f->now.ports[TAP].tap.offloads_probed = TAP_OL_CSUM;
	f->now.ports[TAP].tap.offloads_active = TAP_OL_CSUM;
	const struct diag_finding *fd = assert_cause(f, DIAG_OFFLOAD_REFUSED);
	assert_non_null(strstr(fd->text, "vnet1: TSO from the VM is off (TUNSETOFFLOAD refused by kernel)"));
	f->now.ports[TAP].tap.offloads_probed = TAP_OL_CSUM | TAP_OL_TSO | TAP_OL_USO;
	f->now.ports[VX].sock.udp_gro_probed = false;
	assert_non_null(strstr(assert_cause(f, DIAG_OFFLOAD_REFUSED)->text, "vx99: UDP_GRO refused by kernel"));
	f->now.ports[VX].sock.udp_gro_probed = true;
	f->now.ports[TAP].tap.offloads_active = TAP_OL_CSUM | TAP_OL_TSO | TAP_OL_USO;
	f->in.knobs[CTL_KNOB_GSO] = 0;
	assert_null(diag_find(judge(f), DIAG_OFFLOAD_REFUSED));
	assert_non_null(strstr(assert_cause(f, DIAG_OFFLOAD_OFF)->text, "gso is off"));
}

static void test_fdb_full_and_port_hog(void **state)
{
	struct fx *f = *state;
	f->in.knobs[CTL_KNOB_FDB_MAX] = 1000;
	f->now.fdb.refused_full = 2000;
	f->now.fdb.n_learned = 1000;
	f->now.ports[TAP].fdb.learned = 999;
	f->now.ports[TAP].fdb_vni_learned = 1000;
	assert_int_equal(diag_field_num(assert_cause(f, DIAG_FDB_FULL), "refused"), 2000);
	const struct diag_finding *fd = assert_cause(f, DIAG_FDB_PORT_HOG);
	assert_int_equal(diag_field_num(fd, "macs"), 999);
	assert_int_equal(diag_field_num(fd, "vni_macs"), 1000);
}

static void test_no_hog_below_the_bounds(void **state)
{
	struct fx *f = *state;
	f->now.ports[TAP].fdb.learned = DIAG_HOG_MIN_MACS - 1; /* all of the VNI's, but few */
	f->now.ports[TAP].fdb_vni_learned = DIAG_HOG_MIN_MACS - 1;
	assert_no_finding(f);
	f->now.ports[TAP].fdb.learned = 500; /* many, but half */
	f->now.ports[TAP].fdb_vni_learned = 1000;
	assert_no_finding(f);
}

/* ---- small frames to the VM, and why ------------------------------------------- */

/* A peer without TSO: MTU-sized datagrams, none coalesced, GRO finds one
 * segment per flow per batch. */
static void small_frames(struct fx *f)
{
	tap_tx(f, 100000 + 20000, 100000ull * 1600 + 20000 * 66, 20000, 20000 * 66);
	gro(f, 110000, 100000, 20000);
	f->now.gro.passthrough[GRO_PASS_FLUSHED_ALONE] = 90000;
	sock_rx(f, 130000, 0, 130000ull * 1450);
}

static void test_small_frames_peer_without_tso(void **state)
{
	struct fx *f = *state;
	small_frames(f);
	const struct diag_finding *fd = assert_cause(f, DIAG_SMALL_FRAMES_NO_TSO);
	assert_string_equal(fd->port, "vnet1");
	assert_int_equal(diag_field_num(fd, "coalesced"), 0);
	assert_int_equal(diag_field_num(fd, "datagrams"), 130000);
	assert_int_equal(diag_field_num(fd, "avg_bytes"), 1600);
	assert_non_null(strstr(fd->text, "the peer is not sending TSO"));
}

/* The same small frames from a peer that sends zero UDP checksums: the
 * socket's count tells it from a peer without TSO, and the finding is the
 * vxlan port's (the tap gets none of its own). */
static void test_small_frames_zero_csum_peer(void **state)
{
	struct fx *f = *state;
	small_frames(f);
	f->now.ports[VX].sock.rx_zero_csum_counted = true;
	f->now.ports[VX].sock.rx_zero_csum = 130000;
	const struct diag_finding *fd = assert_cause(f, DIAG_ZERO_CSUM_PEER);
	assert_string_equal(fd->port, "vx99");
	assert_int_equal(diag_field_num(fd, "zero_csum"), 130000);
	assert_int_equal(diag_field_num(fd, "datagrams"), 130000);
	assert_int_equal(diag_field_num(fd, "coalesced"), 0);
	assert_non_null(strstr(fd->text, "udpcsum"));
	assert_null(diag_find(&f->r, DIAG_SMALL_FRAMES_NO_TSO));
	/* A minority of zero checksums: the peer without TSO again. */
	f->now.ports[VX].sock.rx_zero_csum = 60000;
	assert_cause(f, DIAG_SMALL_FRAMES_NO_TSO);
	assert_null(diag_find(&f->r, DIAG_ZERO_CSUM_PEER));
}

/* Zero checksums are named even when our GRO rebuilt big frames from the
 * single datagrams; not when the kernel coalesced (those had a checksum),
 * nor when the "datagrams" were whole GSO packets (a veth passes them so),
 * nor when nothing was counted (IPv6, eBPF refused). */
static void test_zero_csum_peer_bounds(void **state)
{
	struct fx *f = *state;
	tap_tx(f, 100000, 100000ull * 60000, 0, 0);
	gro(f, 4500000, 100000, 0);
	sock_rx(f, 4500000, 0, 4500000ull * 1450);
	f->now.ports[VX].sock.rx_zero_csum = 4500000;
	assert_no_finding(f); /* not counted */
	f->now.ports[VX].sock.rx_zero_csum_counted = true;
	assert_cause(f, DIAG_ZERO_CSUM_PEER);
	sock_rx(f, 4500000, 100000, 4500000ull * 1450);
	assert_no_finding(f); /* 2.2% coalesced */
	sock_rx(f, 100000, 0, 100000ull * 60000);
	f->now.ports[VX].sock.rx_zero_csum = 100000;
	assert_no_finding(f); /* 60 KB "datagrams" */
}

static void test_small_frames_hold_timer_short(void **state)
{
	struct fx *f = *state;
	small_frames(f);
	f->in.knobs[CTL_KNOB_GRO_HOLD_US] = 0;
	f->now.gro.flushes[GRO_FLUSH_SHORT_SEGMENT] = 10000;
	f->now.gro.flushes[GRO_FLUSH_BATCH_END] = 90000;
	const struct diag_finding *fd = assert_cause(f, DIAG_GRO_HOLD_SHORT);
	assert_int_equal(diag_field_num(fd, "gro_hold_us"), 0);
	assert_int_equal(diag_field_num(fd, "timer_flushes"), 90000);
	assert_int_equal(diag_field_num(fd, "gap_us"), 46); /* 130000 datagrams in 6 s */
	assert_null(diag_find(&f->r, DIAG_SMALL_FRAMES_NO_TSO));
	assert_non_null(strstr(fd->text, "`set gro-hold-us 100`")); /* two gaps */
	/* The same runs ended by the timer, but datagrams 300 us apart (a
	 * peer sending one MTU-sized segment at a time, paced): only a hold
	 * past 500 us would merge them, the cause is the peer's. */
	sock_rx(f, 20000, 0, 20000ull * 1450);
	assert_cause(f, DIAG_SMALL_FRAMES_NO_TSO);
	assert_null(diag_find(&f->r, DIAG_GRO_HOLD_SHORT));
	/* Judged since start (too few frames in the window): no known gap,
	 * so the hold is not blamed. */
	f->in.then = NULL;
	assert_null(diag_find(judge(f), DIAG_GRO_HOLD_SHORT));
}

static void test_small_frames_gro_off(void **state)
{
	struct fx *f = *state;
	small_frames(f);
	f->in.knobs[CTL_KNOB_GRO] = 0;
	memset(&f->now.gro, 0, sizeof(f->now.gro));
	assert_non_null(strstr(assert_cause(f, DIAG_SMALL_FRAMES_GRO_OFF)->text, "frames to vnet1 average 1.6 KB: GRO is off"));
}

static void test_small_frames_udp_gro_off(void **state)
{
	struct fx *f = *state;
	small_frames(f);
	f->now.ports[VX].sock.udp_gro_on = false;
	assert_non_null(strstr(assert_cause(f, DIAG_SMALL_FRAMES_NO_UDP_GRO)->text, "udp-gro is off"));
	assert_non_null(diag_find(&f->r, DIAG_OFFLOAD_OFF));
}

/* Coalesced datagrams, a long enough timer, and still one segment a frame:
 * the segments themselves do not fit together. */
static void test_small_frames_unmergeable(void **state)
{
	struct fx *f = *state;
	small_frames(f);
	sock_rx(f, 130000, 20000, 130000ull * 1450);
	f->now.gro.flushes[GRO_FLUSH_SHORT_SEGMENT] = 0;
	f->now.gro.flushes[GRO_FLUSH_SEQ_GAP] = 100000;
	const struct diag_finding *fd = assert_cause(f, DIAG_SMALL_FRAMES_UNMERGEABLE);
	assert_non_null(strstr(fd->text, "not_mergeable_seq_gap"));
}

/* History before the window had small frames; the window itself is fine:
 * what counts is now. */
static void test_small_frames_judged_on_the_window(void **state)
{
	struct fx *f = *state;
	f->then.ports[TAP].stats.tx_frames = 500000;
	f->then.ports[TAP].stats.tx_bytes = 500000ull * 1400;
	f->then.gro.segments_in = f->then.gro.frames_out = 500000;
	tap_tx(f, 10000, 10000ull * 60000, 0, 0);
	f->now.gro.segments_in = 500000 + 450000;
	f->now.gro.frames_out = 500000 + 10000;
	assert_no_finding(f);
}

/* ---- drops and CPU ------------------------------------------------------------ */

static void test_tap_queue_and_socket_drops(void **state)
{
	struct fx *f = *state;
	f->in.ports[TAP].kernel_tx_dropped = 777;
	f->now.ports[VX].sock.rx_queue_drops = 888;
	const struct diag_finding *fd = assert_cause(f, DIAG_TAP_QUEUE_DROPS);
	assert_int_equal(diag_field_num(fd, "dropped"), 777);
	assert_non_null(strstr(fd->text, "vnet1: the kernel dropped 777 frames the VM sent, its tap queue full"));
	assert_int_equal(diag_field_num(assert_cause(f, DIAG_SOCKET_RX_DROPS), "dropped"), 888);
}

/* Worker i's CPU time in snapshot s. */
static void worker_cpu(struct vxd_snapshot *s, unsigned i, uint64_t user_us, uint64_t sys_us)
{
	if (s->n_workers <= i)
		s->n_workers = i + 1;
	s->workers[i].index = i;
	s->workers[i].cpu_pinned = s->workers[i].node = -1;
	s->workers[i].cpu_user_us = user_us;
	s->workers[i].cpu_sys_us = sys_us;
}

static void test_cpu_saturated(void **state)
{
	struct fx *f = *state;
	worker_cpu(&f->then, 0, 7000000, 3000000);
	worker_cpu(&f->now, 0, 9000000, 6000000); /* 5 s of 6 */
	worker_cpu(&f->then, 1, 0, 0);
	worker_cpu(&f->now, 1, 3000000, 2000000); /* two workers near-saturated together are not one */
	assert_no_finding(f);
	worker_cpu(&f->now, 1, 3000000, 2950000);
	const struct diag_finding *fd = assert_cause(f, DIAG_CPU_SATURATED);
	assert_int_equal(diag_field_num(fd, "worker"), 1);
	assert_int_equal(diag_field_num(fd, "cpu_permille"), 991);
	assert_int_equal(diag_field_num(fd, "window_ms"), 6000);
	/* A window under a second tells nothing. */
	f->then.taken_ns = f->now.taken_ns - SEC / 2;
	worker_cpu(&f->now, 1, 0, 500000);
	assert_no_finding(f);
}

static void test_worker_off_node(void **state)
{
	struct fx *f = *state;
	worker_cpu(&f->now, 0, 0, 0);
	worker_cpu(&f->now, 1, 0, 0);
	f->now.workers[0].cpu_pinned = 0, f->now.workers[0].node = 0;
	f->now.workers[1].cpu_pinned = 1, f->now.workers[1].node = 1;
	f->in.underlay = "u1";
	f->in.underlay_node = -1;
	assert_no_finding(f); /* nothing known of the underlay */
	f->in.underlay_node = 1;
	const struct diag_finding *fd = assert_cause(f, DIAG_WORKER_OFF_NODE);
	assert_int_equal(diag_field_num(fd, "worker"), 0);
	assert_int_equal(diag_field_num(fd, "underlay_node"), 1);
	f->now.workers[0].cpu_pinned = -1; /* not pinned: the scheduler's */
	assert_no_finding(f);
}

/* Held back: a worker that ran 5 % of a core but was runnable, waiting
 * for a CPU, most of the window (a CPU quota, other tasks) is saturated
 * too; waiting under three quarters of the window is not. */
static void test_cpu_held_back(void **state)
{
	struct fx *f = *state;
	worker_cpu(&f->then, 0, 1000000, 0);
	worker_cpu(&f->now, 0, 1300000, 0); /* 0.3 s of 6 */
	struct vxd_worker_snap *a = &f->then.workers[0], *b = &f->now.workers[0];
	a->cpu_run_ns = 1000 * SEC / 1000, b->cpu_run_ns = a->cpu_run_ns + 300 * SEC / 1000;
	a->cpu_wait_ns = 2 * SEC, b->cpu_wait_ns = a->cpu_wait_ns + 4400 * SEC / 1000;
	assert_no_finding(f); /* waited 73 % */
	b->cpu_wait_ns = a->cpu_wait_ns + 5100 * SEC / 1000;
	const struct diag_finding *fd = assert_cause(f, DIAG_CPU_SATURATED);
	assert_int_equal(diag_field_num(fd, "cpu_permille"), 50);
	assert_int_equal(diag_field_num(fd, "wait_permille"), 850);
	assert_int_equal(diag_field_num(fd, "busy_permille"), 900);
	assert_non_null(strstr(fd->text, "held back by a CPU quota"));
}

static void test_link_down(void **state)
{
	struct fx *f = *state;
	struct diag_port *p = &f->in.ports[TAP];
	p->link_down = true, p->link_down_s = 7, p->link_down_events = 2;
	snprintf(p->netns, sizeof(p->netns), "vm1");
	f->now.ports[TAP].stats.drops[DROP_PORT_LINK_DOWN] = 40;
	const struct diag_finding *fd = assert_cause(f, DIAG_LINK_DOWN);
	assert_int_equal(diag_field_num(fd, "dropped"), 40);
	assert_non_null(strstr(fd->text, "vnet1: its link is down (7 s, 2 times in all): 40 frames to it dropped "
				     "(port_link_down); bring it up (ip link set vnet1 up in netns vm1)"));
	p->link_down = false;
	p = &f->in.ports[VX];
	p->link_down = true;
	snprintf(p->link_dev, sizeof(p->link_dev), "u1");
	assert_non_null(strstr(assert_cause(f, DIAG_LINK_DOWN)->text, "vx99: its underlay link u1 is down"));
}

/* `diagnose port NAME`: that port's findings only. */
static void test_only_one_port(void **state)
{
	struct fx *f = *state;
	f->in.ports[TAP].kernel_tx_dropped = 5;
	f->now.ports[VX].sock.rx_queue_drops = 6;
	f->in.only = "vx99";
	const struct diag_report *r = judge(f);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->f[0].cause, DIAG_SOCKET_RX_DROPS);
}

/* EVPN: no zebra; zebra but nobody advertises the VNI; MACs behind a VTEP
 * without flood entry; and a healthy EVPN port (zebra, two VTEPs). */
static void test_evpn(void **state)
{
	struct fx *f = *state;
	struct diag_port *p = &f->in.ports[VX];
	p->evpn = true;
	const struct diag_finding *fd = assert_cause(f, DIAG_EVPN_NO_ZEBRA);
	assert_int_equal(diag_field_num(fd, "vni"), 99);
	assert_null(diag_find(&f->r, DIAG_EVPN_NO_REMOTES)); /* one cause at a time */
	p->evpn_zebra = true;
	assert_cause(f, DIAG_EVPN_NO_REMOTES);
	p->n_remotes = 1; /* a static remote: the VMs reach someone */
	assert_no_finding(f);
	p->n_remotes = 0;
	p->evpn_vteps = 2;
	assert_no_finding(f);
	p->evpn_macs_no_flood = 3;
	snprintf(p->evpn_no_flood_vtep, sizeof(p->evpn_no_flood_vtep), "198.51.100.9");
	fd = assert_cause(f, DIAG_EVPN_VTEP_NO_FLOOD);
	assert_int_equal(diag_field_num(fd, "macs"), 3);
	assert_non_null(strstr(fd->text, "198.51.100.9"));
	assert_string_equal(diag_cause_name(DIAG_EVPN_NO_ZEBRA), "evpn_no_zebra");
}

/* The kernel datapath asked for (or the default) but the userspace one
 * runs: a problem, with the reason; not for a port filter, not when the
 * userspace datapath was chosen (no reason given). */
static void test_kernel_datapath_unavailable(void **state)
{
	struct fx *f = *state;
	assert_no_finding(f);
	f->in.kernel_unavailable = "cannot load the programs: Operation not permitted";
	const struct diag_finding *fd = assert_cause(f, DIAG_KERNEL_DATAPATH_UNAVAILABLE);
	assert_non_null(strstr(fd->text, "Operation not permitted"));
	assert_non_null(strstr(fd->text, "--datapath user"));
	assert_string_equal(fd->port, "");
	f->in.only = "vnet1";
	assert_no_finding(f);
	assert_string_equal(diag_cause_name(DIAG_KERNEL_DATAPATH_UNAVAILABLE), "kernel_datapath_unavailable");
}

static void test_cause_names_are_stable(void **state)
{
	(void)state;
	assert_string_equal(diag_cause_name(DIAG_REMOTE_SILENT), "remote_silent");
	assert_string_equal(diag_cause_name(DIAG_SMALL_FRAMES_NO_TSO), "small_frames_no_tso");
	assert_string_equal(diag_cause_name(DIAG_CPU_SATURATED), "cpu_saturated");
	assert_string_equal(diag_cause_name(DIAG_ZERO_CSUM_PEER), "zero_csum_peer");
	assert_string_equal(diag_cause_name(DIAG_CAUSE_COUNT), "invalid");
	for (unsigned c = 0; c < DIAG_CAUSE_COUNT; c++)
		assert_non_null(diag_cause_name((enum diag_cause)c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_idle_switch),
		T(test_bulk_tcp_into_the_vm),
		T(test_ack_only_direction),
		T(test_ovs_like_peer),
		T(test_slow_ovs_like_peer),
		T(test_small_udp_is_no_problem),
		T(test_a_note_is_no_problem),
		T(test_no_local_port_drops),
		T(test_remote_silent),
		T(test_remote_silent_port_unreachable),
		T(test_remote_silent_csum_unfinished),
		T(test_remote_not_silent_yet),
		T(test_tap_alone_in_its_vni),
		T(test_local_vni_without_underlay_is_fine),
		T(test_mtu_over_the_underlay),
		T(test_offloads_refused_or_off),
		T(test_fdb_full_and_port_hog),
		T(test_no_hog_below_the_bounds),
		T(test_small_frames_peer_without_tso),
		T(test_small_frames_zero_csum_peer),
		T(test_zero_csum_peer_bounds),
		T(test_small_frames_hold_timer_short),
		T(test_small_frames_gro_off),
		T(test_small_frames_udp_gro_off),
		T(test_small_frames_unmergeable),
		T(test_small_frames_judged_on_the_window),
		T(test_tap_queue_and_socket_drops),
		T(test_cpu_saturated),
		T(test_worker_off_node),
		T(test_cpu_held_back),
		T(test_link_down),
		T(test_only_one_port),
		T(test_evpn),
		T(test_kernel_datapath_unavailable),
		T(test_cause_names_are_stable),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
