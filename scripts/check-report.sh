#!/bin/sh
# check-report.sh renders a scaleplan report in headless Chromium and checks
# that every chart shows: the DOM after load holds each chart as an <svg> with
# a size and its title, and the screenshot is not blank and shows the charts'
# colours (TestReportInBrowser in internal/cmd; docs/report.md).
#
# Usage: scripts/check-report.sh [SCENARIO] [DIR]
#
# SCENARIO defaults to tsubame3-resnet50-caffe2-verbs. DIR (default a new
# temporary directory) receives report.html, dom.html and screenshot.png.
# CHROMIUM names the browser (default /usr/bin/chromium; Debian:
# apt-get install -y chromium).
set -eu

cd "$(dirname "$0")/.."
scenario=${1:-tsubame3-resnet50-caffe2-verbs}
dir=${2:-$(mktemp -d)}
chromium=${CHROMIUM:-/usr/bin/chromium}

if [ ! -x "$chromium" ]; then
	echo "check-report: no Chromium at $chromium: install it (apt-get install -y chromium) or set CHROMIUM" >&2
	exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

REPORT_CHECK_DIR="$dir" REPORT_CHECK_SCENARIO="$scenario" CHROMIUM="$chromium" \
	go test -count=1 -run '^TestReportInBrowser$' -v ./internal/cmd

echo "check-report: $scenario: $dir/report.html, $dir/dom.html, $dir/screenshot.png"
