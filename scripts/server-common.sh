# Sourced by the benchmark scripts: one way to pick a loopback port and to wait for a fresh server.

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits up to 10 s for the app at base URL $1 to answer ping; fails, saying so, if it does not.
wait_until_answering() {
  for _ in $(seq 100); do
    curl -sf "$1/api/diagscenario/ping" >/dev/null && return 0
    sleep 0.1
  done
  echo "the server at $1 did not answer ping within 10 s" >&2
  return 1
}

# Scrapes the live page's /metrics at port $1 once a second, as Prometheus would, until killed.
scrape_every_second() {
  while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$1/metrics" || true; done
}

# Builds the Release app, the CLI and the load runner, restores the tool manifest's tools, and sets $bin, $cli, $runner.
build_release() {
  dotnet build -c Release -v q -nologo src/DiagnosticScenarios >/dev/null
  dotnet build -c Release -v q -nologo src/dotnet-blocking >/dev/null
  dotnet build -c Release -v q -nologo src/DiagnosticScenarios.LoadRunner >/dev/null
  dotnet tool restore >/dev/null
  bin=src/DiagnosticScenarios/bin/Release/net10.0
  cli=src/dotnet-blocking/bin/Release/net10.0/dotnet-blocking.dll
  runner=src/DiagnosticScenarios.LoadRunner/bin/Release/net10.0/DiagnosticScenarios.LoadRunner.dll
}
