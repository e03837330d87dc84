#!/usr/bin/env bash
# test-suites.sh TARGET...: `make test`'s driver. Runs each suite's make target in
# turn (each sets up what it needs), shows its output as it runs, keeps going
# after a failure, and ends with a summary: which suites ran, passed or failed,
# and what was skipped and why. Exit 1 when any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${TEST_SUMMARY_DIR:-$PWD/bin/test-summary}
rm -rf "$dir" && mkdir -p "$dir"
export TEST_SUMMARY_DIR=$dir
start=$(date +%s)
for t in "$@"; do
	echo "==== make $t"
	s=$(date +%s)
	make --no-print-directory "$t" 2>&1 | tee "$dir/$t.log"
	echo "${PIPESTATUS[0]} $(($(date +%s) - s))" >"$dir/$t.rc"
done

status=0
echo
echo "==== make test: summary ($(($(date +%s) - start)) s)"
for t in "$@"; do
	read -r rc secs <"$dir/$t.rc"
	[ "$rc" = 0 ] && result=passed || { result="FAILED (exit $rc)"; status=1; }
	case $t in
	test-go)
		[ -f "$dir/services.txt" ] && { echo "services for the Go tests:"; cat "$dir/services.txt"; }
		if [ -f "$dir/go.txt" ]; then
			cat "$dir/go.txt"
			[ "$rc" = 0 ] || echo "  (make test-go exited $rc; see $dir/$t.log)"
		else
			echo "go: $result before the tests ran (vet or set-up), ${secs} s: see $dir/$t.log"
		fi
		;;
	test-php)
		# phpunit's last line: "OK (N tests, M assertions)" or "Tests: N, ..., Skipped: K."
		line=$(grep -E '^(OK \(|Tests: [0-9]+|FAILURES!|ERRORS!|No tests executed)' "$dir/$t.log" | tail -n 1)
		echo "php (phpunit): $result, ${secs} s: ${line:-no phpunit summary line: see $dir/$t.log}"
		;;
	test-java)
		line=$(grep -E 'Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$dir/$t.log" | tail -n 1 | sed 's/^\[[A-Z]*\] *//')
		echo "java (Maven Surefire): $result, ${secs} s: ${line:-no Surefire summary line: see $dir/$t.log}"
		;;
	*)
		echo "$t: $result, ${secs} s"
		;;
	esac
done
echo "logs: $dir"
exit $status
