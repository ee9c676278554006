"""How a case reads, the same in Slack and in the terminal: `readings` (how each file is read,
in words), `request_text` (a request as plain text), `charts` (the picture of an outcome) and
`text` (text from uploaded files made safe to show)."""
