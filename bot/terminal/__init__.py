"""The console script `reconbot` and what it prints: `cli` (the entry point, the data engine's
one-shot commands), `workflow_cli` (the use cases on the configured storage), `slack_cli` (the
bot's commands: serve, socket, worker, start), `printer` and `status_text` (what a case looks
like on a terminal), `console` (who acts there, progress), `paths` and `exceptions_file`
(files named on the command line, and where the exceptions CSV is)."""
