"""The local workspace: a Slack stand-in that reconbot can run against without a Slack app.

`workspace.slack` is the stand-in itself (the Web API, files, signed deliveries to the app);
`workspace.local` adds a web page on the same address where people drop files, read the
bot's thread, click its buttons and fill its modals. It imports nothing of reconbot: the
start command hands it what it needs (demo files) and points the bot at it.
"""
