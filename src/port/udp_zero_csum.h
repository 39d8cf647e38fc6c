/* Counting the received datagrams of a UDP socket whose UDP checksum is
 * zero.  A userspace socket never sees the UDP header, yet the checksum
 * decides how the kernel treats a datagram: its UDP GRO coalesces only
 * datagrams with a non-zero checksum ("requires non zero csum, for symmetry
 * with GSO", udp_gro_receive_segment), so a peer that sends zero checksums
 * (the IPv4 default of the kernel's vxlan device and of Open vSwitch) has
 * every datagram cross the stack alone.  `diagnose` tells that peer from
 * one that does not send TSO by this count.
 *
 * How: an eBPF socket filter on the socket.  On a UDP socket a filter runs
 * with the UDP header at offset 0 (sk_filter_trim_cap in
 * udp_queue_rcv_one_skb), once per skb: a coalesced skb is one run, but
 * its checksum is non-zero by construction.  The filter adds 1 to a
 * one-slot array map when the checksum field is 0 and keeps every packet
 * whole.  The map is mmap()ed (BPF_F_MMAPABLE), so reading the count is a
 * load, not a syscall, and needs no privilege once set up.
 *
 * Loading needs CAP_BPF or CAP_SYS_ADMIN (vxswitchd keeps CAP_SYS_ADMIN).
 * Where it is refused the socket works as before and the count is not
 * kept (udp_zero_csum_attach returns -errno; the caller reports
 * "not counted"). */
#ifndef VX_PORT_UDP_ZERO_CSUM_H
#define VX_PORT_UDP_ZERO_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct udp_zero_csum {
	int map_fd;                 /* -1: not counting */
	volatile uint64_t *count;   /* the map's slot, mmap()ed */
};

/* Attaches the counting filter to the UDP socket `fd`.  0, or -errno (then
 * zc is left not counting: map_fd -1, count NULL). */
int udp_zero_csum_attach(int fd, struct udp_zero_csum *zc);
/* Datagrams with a zero checksum since the attach; 0 when not counting.
 * Any thread. */
uint64_t udp_zero_csum_read(const struct udp_zero_csum *zc);
static inline bool udp_zero_csum_counting(const struct udp_zero_csum *zc)
{
	return zc->count != NULL;
}
/* Unmaps and closes (the filter goes with the socket). */
void udp_zero_csum_close(struct udp_zero_csum *zc);

#endif
