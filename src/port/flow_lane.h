/* Flow lanes: which worker handles a frame, decided in the kernel.
 *
 * What: one hash of a frame's flow that picks its lane (its worker) in
 * both places the kernel hands traffic to vxswitchd:
 *   - a vxlan socket's reuseport group (vxlan_lanes.c): a classic BPF
 *     program attached with SO_ATTACH_REUSEPORT_CBPF picks the socket of
 *     each datagram from the inner frame behind its VXLAN header;
 *   - a multi-queue tap (tap.c): an eBPF socket filter program attached
 *     with TUNSETSTEERINGEBPF picks the queue of each frame the VM sends.
 * The same computation in C, flow_lane_pick(), is what tests check both
 * programs against.
 *
 * Design: the hash is symmetric, so both directions of one flow land on
 * one lane.  A TCP stream's data, read from the tap on lane k, and its
 * ACKs, arriving from the underlay, are handled by the same worker on
 * each host: a stream keeps one worker awake per host, not two (on a
 * machine whose cores are shared with the VMs that matters more than
 * spreading ACKs), and a request/response exchange stays on one worker.
 * And the tap's lane is ours, not the kernel's automatic queue choice,
 * which follows the queue a flow was last written on and can move a flow
 * between workers early in its life.
 *
 * The key, over the Ethernet frame:
 *   IPv4:  saddr ^ daddr, and for TCP and UDP ^ (sport ^ dport)
 *   IPv6:  the last 32-bit words of saddr and daddr xored, and for TCP
 *          and UDP (as the next header, no extension headers) ^ (sport ^
 *          dport)
 *   other: a fallback: the outer UDP source port for a vxlan datagram
 *          (which a peer sets from the inner flow's hash), 0 on a tap.
 * then h ^= h >> 16, and the lane is ((h * 0x9e3779b1) >> 16) % lanes in
 * 32-bit arithmetic.  A load past the end of the frame makes both
 * programs return 0, so flow_lane_pick() does too.
 *
 * Thread-safety: pure functions. */
#ifndef VXSWITCH_PORT_FLOW_LANE_H
#define VXSWITCH_PORT_FLOW_LANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The lane of the Ethernet frame `eth` (len bytes) among n_lanes, with
 * `fallback` as the key of a frame that is neither IPv4 nor IPv6. */
unsigned flow_lane_pick(const uint8_t *eth, size_t len, uint32_t fallback, unsigned n_lanes);

enum { FLOW_LANE_PROG_MAX = 64 };
struct sock_filter;
struct bpf_insn;

/* The classic BPF program of a reuseport group whose datagrams the kernel
 * hands over at the UDP payload: the inner frame starts `base` bytes in
 * (8, the VXLAN header), the fallback is the outer UDP source port (of an
 * IPv6 outer header when outer_v6).  Returns its length. */
unsigned flow_lane_cbpf(struct sock_filter *f, unsigned base, bool outer_v6, unsigned n_lanes);

/* The eBPF socket filter program of a tap's steering (the frame at offset
 * 0, fallback 0).  Returns its length. */
unsigned flow_lane_ebpf(struct bpf_insn *f, unsigned n_lanes);

/* Attaches flow_lane_ebpf() to the multi-queue tap open on `tap_fd`
 * (TUNSETSTEERINGEBPF, which holds the program for the whole device).
 * 0 or -errno: the kernel's own queue choice stays then. */
int flow_lane_tap_attach(int tap_fd, unsigned n_lanes);

#endif
