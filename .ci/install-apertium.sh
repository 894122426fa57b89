#!/bin/sh
# Installs Apertium APy and the English-Spanish pair, for the apertium adapter's tests
# against a real server (engines/apertium/real_test.go, internal/apy), which start their own
# APy on a free loopback port; and the English-Catalan and Spanish-Portuguese pairs, which
# the evaluation harness's shipped set covers (eval/real_test.go). Run as root on Debian or Ubuntu. Idempotent: when both
# packages are installed it changes nothing.
#
# The apertium-apy package would also enable and start a system service listening on port
# 2737 on every interface; the tests do not need it, so the install runs under a
# policy-rc.d that forbids starting services, and the service is left disabled.
set -eu

PACKAGES="apertium-apy apertium-eng-spa apertium-eng-cat apertium-es-pt"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	policy=/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	apt-get update -q
	# shellcheck disable=SC2086 # one word per package
	apt-get install -y -q --no-install-recommends $missing
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now apertium-apy.service >/dev/null 2>&1 || true
	fi
fi

if ! command -v apertium-apy >/dev/null 2>&1; then
	echo "install-apertium: apertium-apy is not on PATH" >&2
	exit 1
fi
for mode in eng-spa eng-cat es-pt; do
	if [ ! -f "/usr/share/apertium/modes/$mode.mode" ]; then
		echo "install-apertium: the $mode pair is missing from /usr/share/apertium/modes" >&2
		exit 1
	fi
done
echo "install-apertium: $(apertium-apy -V 2>&1); pairs: $(ls /usr/share/apertium/modes | sed -n 's/\.mode$//p' | tr '\n' ' ')"
