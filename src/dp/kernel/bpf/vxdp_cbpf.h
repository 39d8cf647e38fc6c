/* Classic BPF in the capture hooks: a capture's own filter (pcap_compile's
 * output, the program `vxctl capture PORT FILTER` asks for) run on a frame
 * before the frame is copied up, so that a narrow capture of a busy port
 * copies only what it keeps (contract: vxdp_capture_abi.h).
 *
 * Why an interpreter: the filter arrives while the programs run, and
 * loading a program per capture would re-attach every hook.  Classic BPF
 * jumps only forward, so a filter of n instructions ends within n steps:
 * one bpf_loop() of n steps, one instruction a step, verified once.
 *
 * Semantics are libpcap's bpf_filter() over the frame as the ring would
 * carry it (the skb's bytes from the MAC header; a tag the skb holds
 * outside its bytes is in neither): 32-bit unsigned arithmetic, loads in
 * network order, a load past the frame's end or a division by zero ends
 * the filter with 0 (skip).  Where that semantics is not certain here (a
 * shift by 32 or more, Linux's ancillary loads at SKF_AD_OFF, an opcode
 * classic BPF does not have, a filter that runs off its end) the verdict
 * is "keep": vxswitchd filters every copy again, so a frame kept here
 * costs a copy, one skipped wrongly would be lost.  The loader checked
 * the filter (dp/kernel/kdp_cbpf.c, kdp_cbpf_check): jumps inside it,
 * scratch words written before they are read, a RET last. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_CBPF_H
#define VXSWITCH_DP_KERNEL_VXDP_CBPF_H

#include <linux/filter.h> /* classic BPF: BPF_RVAL, BPF_A, BPF_TAX */

#include "vxdp_capture_abi.h"

/* The machine's state, per CPU (vxdp_capture.h's scratch), not on the
 * stack: the programs' combined stack is at its limit below a flood. */
struct vxdp_cbpf_vm {
	__u32 a, x, pc, verdict;
	__u32 word;                           /* a load's bytes */
	__u32 mem[VXDP_CAP_FILTER_MEM];
};

enum { VXDP_CBPF_SKIP = 0, VXDP_CBPF_KEEP = 1 };

/* bpf_loop's context: pointers only (the callback reads them from the
 * caller's stack). */
struct vxdp_cbpf_run {
	struct __sk_buff *skb;
	const struct vxdp_cap_state *s;
	struct vxdp_cbpf_vm *vm;
};

static __always_inline long cbpf_end(struct vxdp_cbpf_vm *vm, __u32 verdict)
{
	vm->verdict = verdict;
	return 1; /* bpf_loop: stop */
}

/* size bytes (BPF_W, BPF_H, BPF_B) at off into *v, in host order; false
 * past the frame's end. */
static __always_inline bool cbpf_load(struct vxdp_cbpf_run *r, __u64 off, __u32 size, __u32 *v)
{
	struct vxdp_cbpf_vm *vm = r->vm;
	__u32 n = size == BPF_W ? 4 : size == BPF_H ? 2 : 1;
	if (off + n > r->skb->len)
		return false;
	if (size == BPF_W) {
		if (bpf_skb_load_bytes(r->skb, (__u32)off, &vm->word, 4))
			return false;
		*v = bpf_ntohl(vm->word);
	} else if (size == BPF_H) {
		if (bpf_skb_load_bytes(r->skb, (__u32)off, &vm->word, 2))
			return false;
		*v = bpf_ntohs((__u16)vm->word);
	} else {
		if (bpf_skb_load_bytes(r->skb, (__u32)off, &vm->word, 1))
			return false;
		*v = vm->word & 0xff;
	}
	return true;
}

/* BPF_LD / BPF_LDX; 0 to go on. */
static __always_inline long cbpf_ld(struct vxdp_cbpf_run *r, __u16 code, __u32 k)
{
	struct vxdp_cbpf_vm *vm = r->vm;
	__u32 v = 0;
	switch (BPF_MODE(code)) {
	case BPF_IMM:
		v = k;
		break;
	case BPF_MEM:
		v = vm->mem[k & (VXDP_CAP_FILTER_MEM - 1)];
		break;
	case BPF_LEN:
		v = r->skb->len;
		break;
	case BPF_ABS:
	case BPF_IND:
		if (BPF_CLASS(code) == BPF_LDX)
			return cbpf_end(vm, VXDP_CBPF_KEEP);
		if (k >= 0x80000000u) /* SKF_AD_OFF and below: Linux's ancillary data */
			return cbpf_end(vm, VXDP_CBPF_KEEP);
		if (!cbpf_load(r, (__u64)k + (BPF_MODE(code) == BPF_IND ? vm->x : 0), BPF_SIZE(code), &v))
			return cbpf_end(vm, VXDP_CBPF_SKIP);
		break;
	case BPF_MSH: /* X = 4 * (the byte at k & 0xf): an IPv4 header's length */
		if (BPF_CLASS(code) != BPF_LDX || k >= 0x80000000u)
			return cbpf_end(vm, VXDP_CBPF_KEEP);
		if (!cbpf_load(r, k, BPF_B, &v))
			return cbpf_end(vm, VXDP_CBPF_SKIP);
		v = (v & 0xf) << 2;
		break;
	default:
		return cbpf_end(vm, VXDP_CBPF_KEEP);
	}
	if (BPF_CLASS(code) == BPF_LDX)
		vm->x = v;
	else
		vm->a = v;
	return 0;
}

static __always_inline long cbpf_alu(struct vxdp_cbpf_vm *vm, __u16 code, __u32 k)
{
	__u32 src = BPF_SRC(code) == BPF_X ? vm->x : k, a = vm->a;
	switch (BPF_OP(code)) {
	case BPF_ADD: a += src; break;
	case BPF_SUB: a -= src; break;
	case BPF_MUL: a *= src; break;
	case BPF_OR: a |= src; break;
	case BPF_AND: a &= src; break;
	case BPF_XOR: a ^= src; break;
	case BPF_NEG: a = -a; break;
	case BPF_DIV:
	case BPF_MOD:
		if (!src)
			return cbpf_end(vm, VXDP_CBPF_SKIP);
		a = BPF_OP(code) == BPF_DIV ? a / src : a % src;
		break;
	case BPF_LSH:
	case BPF_RSH:
		if (src >= 32)
			return cbpf_end(vm, VXDP_CBPF_KEEP);
		a = BPF_OP(code) == BPF_LSH ? a << src : a >> src;
		break;
	default:
		return cbpf_end(vm, VXDP_CBPF_KEEP);
	}
	vm->a = a;
	return 0;
}

static __always_inline long cbpf_jmp(struct vxdp_cbpf_vm *vm, const struct vxdp_cbpf_insn *in)
{
	__u32 src = BPF_SRC(in->code) == BPF_X ? vm->x : in->k, a = vm->a;
	bool yes;
	switch (BPF_OP(in->code)) {
	case BPF_JA:
		vm->pc += in->k;
		return 0;
	case BPF_JEQ: yes = a == src; break;
	case BPF_JGT: yes = a > src; break;
	case BPF_JGE: yes = a >= src; break;
	case BPF_JSET: yes = (a & src) != 0; break;
	default:
		return cbpf_end(vm, VXDP_CBPF_KEEP);
	}
	vm->pc += yes ? in->jt : in->jf;
	return 0;
}

static long vxdp_cbpf_step(__u64 i, void *arg)
{
	struct vxdp_cbpf_run *r = arg;
	struct vxdp_cbpf_vm *vm = r->vm;
	__u32 pc = vm->pc;
	(void)i;
	if (pc >= r->s->n_insns || pc >= VXDP_CAP_FILTER_MAX)
		return cbpf_end(vm, VXDP_CBPF_KEEP); /* ran off its end */
	const struct vxdp_cbpf_insn *in = &r->s->insns[pc & (VXDP_CAP_FILTER_MAX - 1)];
	__u16 code = in->code;
	__u32 k = in->k;
	vm->pc = pc + 1;
	switch (BPF_CLASS(code)) {
	case BPF_RET:
		if (BPF_RVAL(code) == BPF_K)
			return cbpf_end(vm, k ? VXDP_CBPF_KEEP : VXDP_CBPF_SKIP);
		if (BPF_RVAL(code) == BPF_A)
			return cbpf_end(vm, vm->a ? VXDP_CBPF_KEEP : VXDP_CBPF_SKIP);
		return cbpf_end(vm, VXDP_CBPF_KEEP);
	case BPF_LD:
	case BPF_LDX:
		return cbpf_ld(r, code, k);
	case BPF_ST:
		vm->mem[k & (VXDP_CAP_FILTER_MEM - 1)] = vm->a;
		return 0;
	case BPF_STX:
		vm->mem[k & (VXDP_CAP_FILTER_MEM - 1)] = vm->x;
		return 0;
	case BPF_ALU:
		return cbpf_alu(vm, code, k);
	case BPF_JMP:
		return cbpf_jmp(vm, in);
	default: /* BPF_MISC */
		if (code == (BPF_MISC | BPF_TAX))
			vm->x = vm->a;
		else if (code == (BPF_MISC | BPF_TXA))
			vm->a = vm->x;
		else
			return cbpf_end(vm, VXDP_CBPF_KEEP);
		return 0;
	}
}

/* VXDP_CBPF_KEEP or VXDP_CBPF_SKIP for the frame in skb, by s's filter
 * (s->n_insns > 0).  A global function: the verifier checks it, and the
 * interpreter's every path, once on its own, not once per capture point
 * of the programs (inlined there, vxdp_port_ingress passed 1M). */
__noinline int vxdp_cbpf_filter(struct __sk_buff *skb, const struct vxdp_cap_state *s, struct vxdp_cbpf_vm *vm)
{
	if (!skb || !s || !vm)
		return VXDP_CBPF_KEEP;
	__builtin_memset(vm, 0, sizeof(*vm));
	vm->verdict = VXDP_CBPF_KEEP;
	struct vxdp_cbpf_run r = { .skb = skb, .s = s, .vm = vm };
	__u32 n = s->n_insns < VXDP_CAP_FILTER_MAX ? s->n_insns : VXDP_CAP_FILTER_MAX;
	bpf_loop(n, vxdp_cbpf_step, &r, 0);
	return vm->verdict;
}

#endif
