/* ctl_types: the few types every part of the command language shares (a
 * name's size, an address, a refusal), so that ctl_cmd.h and the grammars it
 * embeds (ctl_flower.h) can include them without including each other. */
#ifndef VX_CTL_CTL_TYPES_H
#define VX_CTL_CTL_TYPES_H

#include <stdint.h>
#include <netinet/in.h>

enum ctl_limits {
	CTL_NAME_SIZE = 16,        /* port name incl. NUL, like IFNAMSIZ */
	CTL_NETNS_SIZE = 64,       /* netns name incl. NUL */
	CTL_MAX_REMOTES = 16,      /* remote VTEPs on one vxlan port */
	CTL_MAX_WORDS = 64,        /* words in one command */
	CTL_ERR_SIZE = 256,        /* one error line incl. NUL */
	CTL_VNI_MAX = 16777215,    /* 24 bits */
	CTL_MTU_MIN = 68,
	CTL_MTU_MAX = 65535,
	CTL_VXLAN_DEFAULT_DSTPORT = 4789,
	CTL_EVPN_SHADOW_PORT = 47890, /* port/evpn_shadow.h: EVPN_SHADOW_UDP_PORT */
	CTL_SRCPORT_MAX_PORTS = 64,    /* control/ports.c asserts = VXLAN_SRCPORT_MAX_PORTS */
};

/* An IPv4 or IPv6 address.  Unused bytes are zero, so two ctl_ip compare
 * with memcmp. */
struct ctl_ip {
	sa_family_t family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
		uint8_t bytes[16];
	};
};

/* Where and why a command was refused. */
struct ctl_err {
	int word;                /* 1-based index of the offending word;
	                          * argc + 1 when a word is missing at the end */
	char msg[CTL_ERR_SIZE];  /* one line, no trailing newline, e.g.
	                          * word 6 "vnii": unknown keyword, expected
	                          * one of: vni, netns, mtu */
};

#endif /* VX_CTL_CTL_TYPES_H */
