/* The netlink requests of the kernel datapath: the collect_md vxlan
 * device, and veth pairs whose one end goes into a VM's namespace.
 * Called from the control thread (kdp.c, the port code); each waits for
 * the kernel's ack.  Return the new device's ifindex or a negative errno. */
#ifndef VXSWITCH_DP_KERNEL_KDP_LINK_H
#define VXSWITCH_DP_KERNEL_KDP_LINK_H

#include <stdint.h>

/* An "external" vxlan device (ip link add NAME type vxlan external
 * dstport PORT nolearning), up. */
int kdp_link_vxlan_create(const char *name, uint16_t dstport);

/* A veth pair NAME <-> PEER, PEER moved into the namespace `netns_fd`
 * (-1: stays here), both up, MTU `mtu` (0: default). */
int kdp_link_veth_create(const char *name, const char *peer, int netns_fd, uint32_t mtu);

#endif
