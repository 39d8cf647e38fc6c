#!/bin/bash
# fuzz-long-one.sh NAME SECONDS: one target of `make fuzz-long`.
#
# Runs $FUZZ_BUILD/NAME for SECONDS at $FUZZ_NICE from the committed seed
# corpus (fuzz/corpus/NAME, read only) into the scratch corpus
# $FUZZ_BUILD/corpus/NAME, replaying fuzz/regressions/NAME first, with
# libFuzzer's output in $FUZZ_BUILD/fuzz-long/NAME.log, and appends one
# record line to $FUZZ_BUILD/fuzz-long/summary.txt:
#   NAME seconds=S execs=N exec/s=R cov=C ft=F corpus=K/B findings=X commit=H start=T
# Exit status: libFuzzer's (non-zero when it found something).
# With RECORD_ONLY=1 it only writes the record line of an existing log
# (a run started by hand, e.g. in the background), SECONDS being its length.
# The whole script is one function, read before it runs: editing this file
# while a 30-minute run is under way cannot make the shell resume mid-line.
set -u
main() {
	n=$1 secs=$2
	b=${FUZZ_BUILD:-build-fuzz}
	nice_cmd=${FUZZ_NICE:-chrt -i 0}
	out=$b/fuzz-long
	mkdir -p "$out" "$b/corpus/$n"
	log=$out/$n.log
	commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo +dirty)
	if [ "${RECORD_ONLY:-0}" = 1 ]; then
		start=$(stat -c %w "$log" 2>/dev/null | cut -c1-19) t0=0 t1=$secs rc=0
	elif [ -d "fuzz/regressions/$n" ] && ! "$b/$n" -runs=0 "fuzz/regressions/$n" >"$out/$n.regressions.log" 2>&1; then
		echo "$n: a regression input crashes (see $out/$n.regressions.log)" | tee -a "$out/summary.txt"
		exit 1
	else
		seeds=; [ -d "fuzz/corpus/$n" ] && seeds=fuzz/corpus/$n
		start=$(date -u +%FT%TZ) t0=$(date +%s)
		$nice_cmd "$b/$n" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$b/" \
			"$b/corpus/$n" $seeds >"$log" 2>&1
		rc=$?
		t1=$(date +%s)
	fi
	execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
	rate=$(awk '/stat::average_exec_per_sec/ { print $2 }' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
	finds=$(grep -c 'ERROR: \|SUMMARY: ' "$log")
	echo "$n seconds=$((t1 - t0)) execs=${execs:-?} exec/s=${rate:-?} cov=${cov:-?} ft=${ft:-?} corpus=${corp:-?} findings=$finds commit=$commit start=$start" \
		| tee -a "$out/summary.txt"
	return $rc
}
main "$@"
exit $?
