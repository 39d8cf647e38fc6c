/* flower_spec: a flower rule as written, the switch's own representation.
 *
 * What?
 *   The data of one flower rule in tc's terms: where it sits (a port
 *   *name*, its ingress or egress, chain, pref, handle, skip_hw), what it
 *   matches (struct flower_match: a protocol, a MAC and its mask, a port
 *   range, prefixes, MPLS label stack entries, ...) and its actions in
 *   order (struct flower_spec_action: a device *name* to redirect to, a
 *   tunnel to set, a VLAN tag to push, ...).  Plain data and the enums of
 *   its keys and limits: no functions, no allocation, nothing of the
 *   command language that writes it.
 *
 * Who fills it?
 *   The command language (the filter grammar of src/ctl) parses an
 *   operator's `filter` line into a command that is a verb around one
 *   struct flower_spec, and prints a struct flower_spec back as the
 *   canonical line (`show config`, `filter show`).  The switch never sees
 *   the words or the verb: the daemon hands flower_table_apply() each spec
 *   with what to do with it (flower_table.h, struct flower_op).  Tests,
 *   fuzz targets and benches fill it directly.
 *
 * Who reads it?
 *   The switch: flower_rule.h compiles a spec into a match over struct
 *   flow_key and a list of actions with port ids, flower_table.h places it
 *   by (hook, chain, pref, handle) and keeps it with the rule, so that what
 *   was added is printed back exactly.  The kernel datapath's rule
 *   compiler (control/kdp_ports_rules.c) reads the same spec to refuse what
 *   its programs cannot do.
 *
 * Invariants the parser keeps and the readers rely on
 *   - A key, action field or flag is meaningful only when its bit is set
 *     in the `given` next to it; a field not given is zero, so two specs
 *     compare with memcmp (after a memset: the parser zeroes first).
 *   - Addresses are masked (no bit of addr outside mask) and a prefix's
 *     addr and mask are of one family; a name is NUL-terminated.
 *   - 1..FLOWER_MAX_ACTIONS actions, none after a final one (redirect,
 *     drop, pass, goto, continue: flower_action_is_final()). */
#ifndef VX_SWITCH_FLOWER_SPEC_H
#define VX_SWITCH_FLOWER_SPEC_H

#include <stdint.h>
#include <netinet/in.h>

enum flower_spec_limits {
	FLOWER_MAX_ACTIONS = 8,
	FLOWER_PREF_MAX = 65535,    /* tc: 16 bits; 0 = chosen at add */
	FLOWER_AUTO_PREF = 49152,   /* tc's first automatic pref */
	FLOWER_TCP_FLAGS_MASK = 0xfff,
	FLOWER_NAME_SIZE = 16,      /* a port name incl. NUL, like IFNAMSIZ */
};

/* flower_spec.given: the rule-level keys. */
enum flower_spec_key {
	FLOWER_SF_PREF = 1 << 0,
	FLOWER_SF_HANDLE = 1 << 1,
	FLOWER_SF_CHAIN = 1 << 2,
	FLOWER_SF_SKIP_HW = 1 << 3,
	FLOWER_SF_EGRESS = 1 << 6,  /* the rule sits on the port's egress (tc's
	                             * clsact egress, parent ffff:fff3) */
};

/* flower_match.given: one bit per match key, in printing order. */
enum flower_match_key {
	FLOWER_FM_PROTOCOL = 1 << 0,
	FLOWER_FM_DST_MAC = 1 << 1,
	FLOWER_FM_SRC_MAC = 1 << 2,
	FLOWER_FM_VLAN_ID = 1 << 3,
	FLOWER_FM_VLAN_PRIO = 1 << 4,
	FLOWER_FM_VLAN_ETHTYPE = 1 << 5,
	FLOWER_FM_IP_PROTO = 1 << 6,
	FLOWER_FM_SRC_IP = 1 << 7,
	FLOWER_FM_DST_IP = 1 << 8,
	FLOWER_FM_SRC_PORT = 1 << 9,
	FLOWER_FM_DST_PORT = 1 << 10,
	FLOWER_FM_TCP_FLAGS = 1 << 11,
	FLOWER_FM_IP_TOS = 1 << 12,
	FLOWER_FM_IP_TTL = 1 << 13,
	FLOWER_FM_IP_FLAGS = 1 << 14,
	FLOWER_FM_ICMP_TYPE = 1 << 15,
	FLOWER_FM_ICMP_CODE = 1 << 16,
	FLOWER_FM_ENC_KEY_ID = 1 << 17,
	FLOWER_FM_ENC_SRC_IP = 1 << 18,
	FLOWER_FM_ENC_DST_IP = 1 << 19,
	FLOWER_FM_ENC_DST_PORT = 1 << 20,
	/* indev NAME: far from the bits above, which grow with the keys
	 * added in printing order. */
	FLOWER_FM_INDEV = 1 << 30,
};

/* flower_match.given_ext: the keys added after `given` filled up, in
 * printing order. */
enum flower_match_key_ext {
	FLOWER_FX_MPLS = 1 << 0,        /* mpls lse ...: mpls[] */
	FLOWER_FX_MPLS_LABEL = 1 << 1,  /* the first entry's fields, tc's older form */
	FLOWER_FX_MPLS_TC = 1 << 2,
	FLOWER_FX_MPLS_BOS = 1 << 3,
	FLOWER_FX_MPLS_TTL = 1 << 4,
	FLOWER_FX_ARP_SIP = 1 << 5,
	FLOWER_FX_ARP_TIP = 1 << 6,
	FLOWER_FX_ARP_OP = 1 << 7,
	FLOWER_FX_ARP_SHA = 1 << 8,
	FLOWER_FX_ARP_THA = 1 << 9,
	FLOWER_FX_ENC_TOS = 1 << 10,    /* the outer IP header of a VXLAN frame */
	FLOWER_FX_ENC_TTL = 1 << 11,
};

/* One `lse` of `mpls`: the label stack entry at depth 1..FLOWER_MPLS_MAX
 * (tc-flower(8); the kernel's TCA_FLOWER_KEY_MPLS_OPTS_LSE). */
enum { FLOWER_MPLS_MAX = 7 }; /* the kernel's FLOW_DIS_MPLS_MAX */
enum flower_mpls_field {
	FLOWER_MPLS_DEPTH = 1 << 0,     /* the entry is matched (it must exist) */
	FLOWER_MPLS_LABEL = 1 << 1,
	FLOWER_MPLS_TC = 1 << 2,
	FLOWER_MPLS_BOS = 1 << 3,
	FLOWER_MPLS_TTL = 1 << 4,
};
struct flower_mpls_lse {
	uint8_t given;               /* FLOWER_MPLS_*; 0: depth not matched */
	uint8_t tc, bos, ttl;
	uint32_t label;              /* 20 bits */
};

/* Ethertypes the rules name. */
enum flower_eth_type {
	FLOWER_ETH_ALL = 0x0000, /* protocol all: no match on the ethertype */
	FLOWER_ETH_IP = 0x0800,
	FLOWER_ETH_ARP = 0x0806,
	FLOWER_ETH_8021Q = 0x8100,
	FLOWER_ETH_IPV6 = 0x86dd,
	FLOWER_ETH_8021AD = 0x88a8,
	FLOWER_ETH_MPLS_UC = 0x8847,
	FLOWER_ETH_MPLS_MC = 0x8848,
	FLOWER_ETH_RARP = 0x8035,
};

/* ip_flags bits, tc's names. */
enum flower_ip_flag {
	FLOWER_IPF_FRAG = 1 << 0,      /* the packet is a fragment */
	FLOWER_IPF_FIRSTFRAG = 1 << 1, /* ... and the first one (offset 0) */
};

/* An IPv4 or IPv6 address.  Unused bytes are zero, so two compare with
 * memcmp. */
struct flower_ip {
	sa_family_t family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
		uint8_t bytes[16];
	};
};

/* An address and its mask; addr has no bit outside mask, family is the
 * family of both. */
struct flower_prefix {
	struct flower_ip addr;
	struct flower_ip mask;
};

struct flower_match {
	uint32_t given;            /* FLOWER_FM_*; a field not given is zero */
	uint16_t protocol;         /* ethertype, FLOWER_ETH_ALL for `all` */
	uint8_t dst_mac[6], dst_mac_mask[6];
	uint8_t src_mac[6], src_mac_mask[6];
	uint16_t vlan_id;
	uint8_t vlan_prio;
	uint8_t ip_proto;
	uint16_t vlan_ethtype;
	uint16_t src_port_min, src_port_max; /* min == max for one port */
	uint16_t dst_port_min, dst_port_max;
	uint16_t src_port_mask, dst_port_mask; /* 0xffff but for VALUE/MASK (min == max
	                                        * == VALUE & MASK then) */
	uint16_t tcp_flags, tcp_flags_mask;
	uint8_t ip_tos, ip_tos_mask;
	uint8_t ip_ttl, ip_ttl_mask;
	uint8_t ip_flags, ip_flags_mask; /* FLOWER_IPF_* */
	uint8_t icmp_type, icmp_code;
	uint8_t icmp_type_mask, icmp_code_mask; /* 0xff unless a mask is given */
	uint16_t enc_dst_port;
	uint32_t enc_key_id;
	struct flower_prefix src_ip, dst_ip, enc_src_ip, enc_dst_ip;
	uint32_t given_ext;        /* FLOWER_FX_* */
	struct flower_mpls_lse mpls[FLOWER_MPLS_MAX]; /* mpls lse: by depth - 1 */
	uint32_t mpls_label;       /* mpls_label/_tc/_bos/_ttl: depth 1 */
	uint8_t mpls_tc, mpls_bos, mpls_ttl;
	uint8_t arp_op, arp_op_mask;
	uint8_t arp_sha[6], arp_sha_mask[6], arp_tha[6], arp_tha_mask[6];
	struct flower_prefix arp_sip, arp_tip; /* IPv4 */
	uint8_t enc_tos, enc_tos_mask, enc_ttl, enc_ttl_mask;
	char indev[FLOWER_NAME_SIZE]; /* FLOWER_FM_INDEV: the port the frame came in on */
};

enum flower_act_type {
	FLOWER_ACT_REDIRECT = 1, /* mirred egress redirect: ends the list */
	FLOWER_ACT_MIRROR,       /* mirred egress mirror: a copy, goes on */
	FLOWER_ACT_DROP,
	FLOWER_ACT_PASS,         /* on to L2 switching */
	FLOWER_ACT_GOTO,         /* goto chain N */
	FLOWER_ACT_TUNNEL_SET,
	FLOWER_ACT_TUNNEL_UNSET,
	FLOWER_ACT_VLAN_PUSH,
	FLOWER_ACT_VLAN_POP,
	FLOWER_ACT_VLAN_MODIFY,
	FLOWER_ACT_CONTINUE,     /* gact continue: ends the list, classification
	                          * goes on at the next pref (TC_ACT_UNSPEC) */
	FLOWER_ACT_PIPE,         /* gact pipe: nothing, the list goes on */
};

/* flower_spec_action.given for tunnel_key set and vlan push/modify. */
enum flower_act_key {
	FLOWER_AK_DST_PORT = 1 << 0,
	FLOWER_AK_NOCSUM = 1 << 1,
	FLOWER_AK_CSUM = 1 << 2,
	FLOWER_AK_PRIORITY = 1 << 3,
	FLOWER_AK_PROTOCOL = 1 << 4,
};

/* An action as written (flower_rule.h's struct flower_action is the same
 * compiled: port names resolved to ids). */
struct flower_spec_action {
	uint8_t type;             /* enum flower_act_type */
	uint8_t given;            /* FLOWER_AK_* */
	uint8_t vlan_prio;        /* vlan push/modify */
	uint16_t vlan_id;         /* vlan push/modify */
	uint16_t vlan_tpid;       /* vlan push: FLOWER_ETH_8021Q unless given */
	uint16_t dst_port;        /* tunnel_key set: 4789 unless given */
	uint32_t chain;           /* goto */
	uint32_t vni;             /* tunnel_key set id */
	char dev[FLOWER_NAME_SIZE]; /* mirred */
	struct flower_ip src, dst;  /* tunnel_key set, one family */
};

/* One rule: its place, its match, its actions.  A del names a place only
 * (dev and hook, then chain, pref, handle and the protocol as given). */
struct flower_spec {
	char dev[FLOWER_NAME_SIZE];
	uint32_t given;           /* FLOWER_SF_* */
	uint32_t pref;            /* 1..FLOWER_PREF_MAX when given */
	uint32_t handle;          /* 1..0xffffffff when given */
	uint32_t chain;           /* 0 unless given */
	struct flower_match match;
	unsigned int n_actions;   /* 1..FLOWER_MAX_ACTIONS for a rule */
	struct flower_spec_action actions[FLOWER_MAX_ACTIONS];
};

#endif /* VX_SWITCH_FLOWER_SPEC_H */
