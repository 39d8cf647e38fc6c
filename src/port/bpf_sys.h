/* The bpf(2) calls vxswitchd makes, raw: its eBPF programs are a few
 * dozen instructions each (udp_zero_csum.c, flow_lane.c), too small to
 * want libbpf.  Pure wrappers, no state. */
#ifndef VXSWITCH_PORT_BPF_SYS_H
#define VXSWITCH_PORT_BPF_SYS_H

#include <linux/bpf.h>

/* One instruction: code, dst, src, off, imm. */
#define BPF_INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

long bpf_sys(int cmd, union bpf_attr *attr);

/* Loads a BPF_PROG_TYPE_SOCKET_FILTER program (GPL); its fd or -errno. */
int bpf_socket_filter_load(const struct bpf_insn *insns, unsigned n);

#endif
