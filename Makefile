# Two commands for a fresh machine with Python 3.11+ and make:
#   make run    the Slack bot on the embedded defaults when Slack credentials are set; without
#               them, the bot against a local workspace at http://127.0.0.1:3000/ (PORT to move
#               it): a Slack stand-in in the browser (`make demo`: the workflow in the terminal)
#   make test   lint, format check, type check, import contracts and the whole test suite
PYTHON ?= python3
UV_VERSION := 0.13.9
UV := .uv/bin/uv
VENV := .venv
DEMO := var/demo

.PHONY: run demo test lint screenshots bench bench-10m clean

$(UV):
	$(PYTHON) -m venv .uv
	.uv/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.synced: $(UV) pyproject.toml uv.lock
	UV_PYTHON=$(PYTHON) $(UV) sync --locked --quiet
	touch $@

run: $(VENV)/.synced
	$(VENV)/bin/reconbot start --local-workspace

demo: $(VENV)/.synced
	$(VENV)/bin/reconbot demo-data --rows 10000 --out $(DEMO) > /dev/null
	$(VENV)/bin/reconbot investigate $(DEMO)/orders.csv $(DEMO)/payments.csv

lint: $(VENV)/.synced
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache --no-logo

test: lint
	$(VENV)/bin/pytest -q -n 2 --dist loadfile

# The README's pictures of the local workspace (approval.png, results.png), taken by the browser
# tests in Debian's Chromium (apt-get install chromium; fonts-noto-color-emoji for the emoji).
screenshots: $(VENV)/.synced
	rm -f docs/screenshots/approval.png docs/screenshots/results.png docs/screenshots/policy-change.png
	RECONBOT_SCREENSHOTS=docs/screenshots $(VENV)/bin/pytest -q \
		tests/e2e/browser/test_local_workspace.py tests/e2e/browser/test_policy_change.py \
		-k "demo_pair or policy_change"
	@test -s docs/screenshots/approval.png && test -s docs/screenshots/results.png \
		&& test -s docs/screenshots/policy-change.png \
		|| { echo "make screenshots: no pictures taken (the skip reason is above)"; exit 1; }

bench: $(VENV)/.synced
	$(VENV)/bin/python scripts/flow_benchmark.py
	$(VENV)/bin/python scripts/benchmark.py
	$(VENV)/bin/python scripts/ack_latency.py
	$(VENV)/bin/python scripts/click_latency.py
	$(VENV)/bin/python scripts/worker_scaling.py

# Not in CI: 10M orders x 10M payments (about 2.9 GB of CSV), the whole flow once, no pandas.
bench-10m: $(VENV)/.synced
	$(VENV)/bin/python scripts/flow_benchmark.py --sizes 10000000 --repeat 1 --no-warm-up --peers duckdb

clean:
	rm -rf .uv $(VENV) var bench-data
