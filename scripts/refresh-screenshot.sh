#!/usr/bin/env bash
# Refreshes docs/images/live-page-starved.png, the README's picture of the live page: the suite's browser run opens the
# page in headless Chromium, starts taskwait's load with the page's own button, and saves the page once it says the pool
# is starved. Needs chromium and chromium-driver; it loads a server, so run it alone (under the machine's timing lock).
#
# usage: scripts/refresh-screenshot.sh
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
pictures=$(mktemp -d)
trap 'rm -rf "$pictures"' EXIT

DOCS_SCREENSHOT_DIR="$pictures" dotnet test tests/DiagnosticScenarios.Tests \
  --filter "FullyQualifiedName~LivePageBrowserTests.LivePage_ShowsThreadsRisingAndStarvation_WhenItsButtonLoadsTaskWait"

picture="$pictures/live-page-taskwait-starved.png"
if [ ! -s "$picture" ]; then
  echo "refresh-screenshot: the run saved no picture: the page did not say starved a few seconds after its reload" >&2
  exit 1
fi
mkdir -p docs/images
cp "$picture" docs/images/live-page-starved.png
echo "refresh-screenshot: wrote docs/images/live-page-starved.png"
