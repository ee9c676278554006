"""Durable work: what a web process enqueues and a worker runs.

A Slack listener verifies, acknowledges and enqueues one named job (`bot.slack.jobs`); a worker
runs it through the `Runner` it was given at composition, which calls the bot's handler. This
package knows nothing of Slack: `queue` is the port (`JobQueue`, `Runner`, `Attempt`). Two
queues carry the same jobs:

- `postgres`: procrastinate on PostgreSQL. Web processes only enqueue; `reconbot worker`
  processes run the jobs, anywhere, with one lock per Slack thread (a case's jobs never
  interleave across processes), a queueing lock per Slack event, retries with backoff for a
  file store that is down, and a job whose worker stopped heart-beating retried by another.
- `in_process`: the embedded default (SQLite, one process): the same job functions on the
  process's own executors, with the same retries.
"""
