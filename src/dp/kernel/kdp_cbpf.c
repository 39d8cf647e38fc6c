#include "dp/kernel/kdp_cbpf.h"

#include <errno.h>
#include <linux/filter.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The opcodes libpcap's bpf_filter() executes (its default case aborts). */
static bool cbpf_known(uint16_t code)
{
	switch (code) {
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_LD | BPF_H | BPF_ABS:
	case BPF_LD | BPF_B | BPF_ABS:
	case BPF_LD | BPF_W | BPF_IND:
	case BPF_LD | BPF_H | BPF_IND:
	case BPF_LD | BPF_B | BPF_IND:
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_MSH | BPF_B:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_JMP | BPF_JA:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
	case BPF_ALU | BPF_NEG:
		return true;
	}
	if (BPF_CLASS(code) == BPF_JMP) {
		uint16_t op = BPF_OP(code);
		return (code & ~(BPF_OP(0xffff) | BPF_SRC(0xffff) | 0x07)) == 0 &&
		       (op == BPF_JEQ || op == BPF_JGT || op == BPF_JGE || op == BPF_JSET);
	}
	if (BPF_CLASS(code) == BPF_ALU) {
		uint16_t op = BPF_OP(code);
		return (code & ~(BPF_OP(0xffff) | BPF_SRC(0xffff) | 0x07)) == 0 &&
		       (op == BPF_ADD || op == BPF_SUB || op == BPF_MUL || op == BPF_DIV || op == BPF_MOD ||
			op == BPF_AND || op == BPF_OR || op == BPF_XOR || op == BPF_LSH || op == BPF_RSH);
	}
	return false;
}

static int cbpf_bad(char *why, size_t why_len, int err, const char *fmt, ...)
{
	if (why && why_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static bool cbpf_mem(uint16_t code)
{
	return code == (BPF_LD | BPF_MEM) || code == (BPF_LDX | BPF_MEM) || code == BPF_ST || code == BPF_STX;
}

/* One instruction alone: its opcode, constants and jump targets. */
static int cbpf_check_one(const struct vxdp_cbpf_insn *in, size_t pc, size_t n, char *why, size_t why_len)
{
	uint16_t code = in->code;
	if (!cbpf_known(code))
		return cbpf_bad(why, why_len, -EINVAL, "instruction %zu: opcode 0x%02x", pc, code);
	if (cbpf_mem(code) && in->k >= VXDP_CAP_FILTER_MEM)
		return cbpf_bad(why, why_len, -EINVAL, "instruction %zu: scratch word %u", pc, in->k);
	if (BPF_CLASS(code) == BPF_ALU && BPF_SRC(code) == BPF_K) {
		if ((BPF_OP(code) == BPF_DIV || BPF_OP(code) == BPF_MOD) && in->k == 0)
			return cbpf_bad(why, why_len, -EINVAL, "instruction %zu: division by 0", pc);
		if ((BPF_OP(code) == BPF_LSH || BPF_OP(code) == BPF_RSH) && in->k >= 32)
			return cbpf_bad(why, why_len, -EINVAL, "instruction %zu: a shift by %u", pc, in->k);
	}
	if (BPF_CLASS(code) == BPF_JMP) {
		uint64_t next = pc + 1, last = n - 1;
		if (code == (BPF_JMP | BPF_JA) ? next + in->k > last : next + in->jt > last || next + in->jf > last)
			return cbpf_bad(why, why_len, -EINVAL, "instruction %zu: a jump past the end", pc);
	}
	return 0;
}

int kdp_cbpf_check(const struct vxdp_cbpf_insn *insns, size_t n, char *why, size_t why_len)
{
	if (!n)
		return cbpf_bad(why, why_len, -EINVAL, "no instruction");
	if (n > VXDP_CAP_FILTER_MAX)
		return cbpf_bad(why, why_len, -E2BIG, "%zu instructions, over %d", n, VXDP_CAP_FILTER_MAX);
	if (BPF_CLASS(insns[n - 1].code) != BPF_RET)
		return cbpf_bad(why, why_len, -EINVAL, "instruction %zu: the last is not a return", n - 1);
	/* written[pc]: the scratch words written on every path to pc (jumps
	 * go forward: one pass in order sees each instruction's every
	 * predecessor first). */
	uint16_t written[VXDP_CAP_FILTER_MAX];
	bool reached[VXDP_CAP_FILTER_MAX] = { true };
	written[0] = 0;
	for (size_t pc = 0; pc < n; pc++) {
		const struct vxdp_cbpf_insn *in = &insns[pc];
		int err = cbpf_check_one(in, pc, n, why, why_len);
		if (err < 0)
			return err;
		if (!reached[pc])
			continue; /* dead code: libpcap's optimizer leaves none, but it cannot run */
		uint16_t w = written[pc], code = in->code;
		if ((code == (BPF_LD | BPF_MEM) || code == (BPF_LDX | BPF_MEM)) && !(w & (1u << in->k)))
			return cbpf_bad(why, why_len, -EINVAL, "instruction %zu: scratch word %u read before written",
					pc, in->k);
		if (code == BPF_ST || code == BPF_STX)
			w |= (uint16_t)(1u << in->k);
		size_t to[2];
		unsigned n_to = 0;
		if (BPF_CLASS(code) == BPF_RET)
			n_to = 0;
		else if (code == (BPF_JMP | BPF_JA))
			to[n_to++] = pc + 1 + in->k;
		else if (BPF_CLASS(code) == BPF_JMP) {
			to[n_to++] = pc + 1 + in->jt;
			to[n_to++] = pc + 1 + in->jf;
		} else
			to[n_to++] = pc + 1;
		for (unsigned i = 0; i < n_to; i++) {
			size_t t = to[i];
			written[t] = reached[t] ? (uint16_t)(written[t] & w) : w;
			reached[t] = true;
		}
	}
	return 0;
}
