/* The loader's check of a capture's pre-filter (bpf/vxdp_cbpf.h runs it
 * in the programs): a classic BPF program the programs' interpreter and
 * libpcap's bpf_filter() both run safely and alike.
 *
 * It is what pcap_compile makes: the opcodes libpcap's bpf_filter()
 * knows (anything else it aborts on), jumps forward inside the program,
 * scratch words M[0..15] written on every path before they are read, no
 * division by a constant 0 nor shift by a constant of 32 or more, and a
 * RET last.  What fails is not refused to the operator: the capture runs
 * with vxswitchd's filter alone (copies of every frame), and the reason
 * is logged.
 *
 * Pure: no system call; the fuzz target fuzz_vxdp_cbpf feeds it. */
#ifndef VXSWITCH_DP_KERNEL_KDP_CBPF_H
#define VXSWITCH_DP_KERNEL_KDP_CBPF_H

#include <stddef.h>

#include "dp/kernel/bpf/vxdp_capture_abi.h"

/* 0 when insns[0..n) may be a pre-filter; else -EINVAL (-E2BIG: more
 * than VXDP_CAP_FILTER_MAX) and *why (may be NULL) says what is wrong,
 * "instruction 7: a jump past the end". */
int kdp_cbpf_check(const struct vxdp_cbpf_insn *insns, size_t n, char *why, size_t why_len);

#endif
