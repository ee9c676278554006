"""gunicorn settings for reconbot's HTTP mode.

gunicorn reads this file by itself when started from the repository root; elsewhere pass it:
`gunicorn -c /path/to/gunicorn.conf.py`. Command-line flags override it
(`--workers 2 --bind 0.0.0.0:3000`); the number of workers defaults to `WEB_CONCURRENCY` or 1.

Put a TLS-terminating reverse proxy (nginx, a cloud load balancer) in front of gunicorn, never
gunicorn alone on the internet: gunicorn's threads read each request themselves, so a client
sending slowly holds a thread. The proxy should buffer whole requests before passing them on,
refuse bodies over 1 MB (nginx: `client_max_body_size 1m;` — Slack's payloads are a few
kilobytes), and time out slow or silent clients after about 10 seconds (nginx:
`client_header_timeout 10s; client_body_timeout 10s; send_timeout 10s;`). Keep the proxy's idle
time for kept-alive connections to gunicorn under `keepalive` below (nginx upstream:
`keepalive_timeout 4s;`), or it may reuse a connection gunicorn is closing. The app enforces the
1 MB limit itself too (413, without reading the body), and refuses malformed JSON with 400.
"""

import os

wsgi_app = "bot.composition:wsgi_application()"
bind = [f"0.0.0.0:{os.environ.get('PORT', '3000')}"]

# Threads per worker: a slow handler holds one thread, not the worker.
worker_class = "gthread"
threads = 16

# A worker silent for this long is killed and replaced.
timeout = 30
# On SIGTERM or a reload, workers get this long to finish the requests in hand.
graceful_timeout = 30
# An idle kept-alive connection is closed after this long.
keepalive = 5

# Slack's requests are one short line and about a dozen headers.
limit_request_line = 2048
limit_request_fields = 50
limit_request_field_size = 4096
