/* What the SIOCETHTOOL ioctl says of a link in the caller's namespace:
 * its driver and whether it offloads transmit checksums.  Control path
 * only (one ioctl on a throwaway socket each).
 *
 * Why the switch asks: a veth with tx checksum offload hands the
 * datagrams we send to its peer with the UDP checksum unfinished
 * (CHECKSUM_PARTIAL: the field holds only the pseudo-header sum).  The
 * peer's kernel accepts them, but anything that reads that wire raw
 * (AF_PACKET: Open vSwitch's userspace datapath, a capture) sees a wrong
 * checksum, and Open vSwitch drops every such datagram. */
#ifndef VX_PORT_ETHTOOL_H
#define VX_PORT_ETHTOOL_H

#include <stdbool.h>
#include <stddef.h>

/* The driver's name ("veth", "virtio_net", ...) into out; 0 or -errno. */
int ethtool_driver(const char *dev, char *out, size_t size);

/* 1 if transmit checksum offload is on, 0 if off, or -errno. */
int ethtool_tx_csum(const char *dev);

/* 1 if TCP segmentation offload (tx-tcp-segmentation) is on, 0 if off,
 * or -errno. */
int ethtool_tso(const char *dev);

/* True when datagrams sent through `dev` reach its peer with their UDP
 * checksums unfinished: a veth with tx checksum offload on. */
bool ethtool_leaves_csum_unfinished(const char *dev);

#endif
